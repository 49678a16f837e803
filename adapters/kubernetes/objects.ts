/**
 * The names and the fields pds reads of the objects it watches (issue 10 "Names everyone uses"; deploy/README.md
 * "Names", "What each leaves behind"). Only the fields read are typed: Argo's own types stop here.
 */
import type { KubernetesObject } from '@kubernetes/client-node';

export const ARGO_GROUP = 'argoproj.io';
export const ARGO_VERSION = 'v1alpha1';

/** Labels pds and the WorkflowTemplates put on what they make. */
export const LABEL = {
  tenant: 'pds.dev/tenant',
  service: 'pds.dev/service',
  operation: 'pds.dev/operation',
  managedBy: 'pds.dev/managed-by',
  role: 'pds.dev/role',
  componentType: 'pds.dev/component-type',
  previewOf: 'pds.dev/preview-of',
  database: 'pds.dev/database',
} as const;

/** Annotations pds and the WorkflowTemplates put on what they make. */
export const ANNOTATION = {
  user: 'pds.dev/user',
  uid: 'pds.dev/uid',
  displayName: 'pds.dev/display-name',
  description: 'pds.dev/description',
  contactEmail: 'pds.dev/contact-email',
  member: 'pds.dev/member',
  host: 'pds.dev/host',
  port: 'pds.dev/port',
  imageTag: 'pds.dev/image-tag',
  dockerfileRepo: 'pds.dev/dockerfile-repo',
  dockerfilePath: 'pds.dev/dockerfile-path',
  healthCheckPath: 'pds.dev/health-check-path',
  expiresAt: 'pds.dev/expires-at',
  /** On a Rollout: the tag serving before the release in progress, the release's tag and its workflow (issue 22). */
  stableTag: 'pds.dev/stable-tag',
  canaryTag: 'pds.dev/canary-tag',
  workflow: 'pds.dev/workflow',
  /**
   * On an Application: the release deploy-service's exit handler rolled back (issue 22), JSON `{workflow, canaryTag,
   * stableTag, message}`; empty once a deploy records a new tag.
   */
  rolledBack: 'pds.dev/rolled-back',
} as const;

/** The ResourceQuota create-tenant makes in a tenant's namespace. */
export const QUOTA_NAME = 'pds-quota';

/** An Argo CD Application, the fields pds reads. */
export interface Application extends KubernetesObject {
  status?: {
    sync?: { status?: string };
    health?: { status?: string; message?: string };
    conditions?: Array<{ type?: string; message?: string }>;
    operationState?: { phase?: string; message?: string };
  };
}

/** One node of a Workflow's status (`status.nodes[id]`). */
export interface WorkflowNode {
  id?: string;
  name?: string;
  displayName?: string;
  type?: string;
  templateName?: string;
  /** For a step of a referenced WorkflowTemplate (then `templateName` may be empty). */
  templateRef?: { name?: string; template?: string };
  phase?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
}

/** An Argo Workflow, the fields pds writes and reads. */
export interface Workflow extends KubernetesObject {
  spec?: {
    workflowTemplateRef?: { name: string };
    arguments?: { parameters?: Array<{ name: string; value?: string }> };
    synchronization?: { mutex?: { name: string } };
  };
  status?: {
    phase?: string;
    message?: string;
    startedAt?: string;
    finishedAt?: string;
    nodes?: Record<string, WorkflowNode>;
  };
}

/**
 * Labels Argo's controller keeps on every Workflow (`workflow.argoproj.io/...` in Argo's `common` package):
 * the phase, and `completed` = `"true"` once the Workflow finished.
 * https://github.com/argoproj/argo-workflows/blob/main/workflow/common/common.go
 */
export const ARGO_LABEL = {
  phase: 'workflows.argoproj.io/phase',
  completed: 'workflows.argoproj.io/completed',
} as const;

/** A Workflow as the informer holds it: metadata only (`PartialObjectMetadata`), the phase in {@link ARGO_LABEL}. */
export type WorkflowMetadata = KubernetesObject;
