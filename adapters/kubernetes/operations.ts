/**
 * The cluster's operation table (DESIGN.md "Operations: one contract, two implementations"): for every operation id,
 * the arguments of its Argo Workflow — the operation's own parameters as strings (never `env_vars`) plus the values
 * pds derives once (deploy/README.md "Parameters"), and the environment that goes into the Workflow's Secret instead
 * of its parameters. The WorkflowTemplate named as the operation does the work.
 */
import type { OperationId, OperationParams } from '../../core/operations/index.js';
import { parameterStrings } from '../../core/operations/parameters.js';
import { DEFAULT_CANARY_STEPS } from '../../core/rollouts.js';
import { applicationName, previewName, serviceHost } from '../../core/names.js';
import { DEFAULT_BUILD_FILE, pushSecretName, sourceImage } from '../../core/images.js';

/** What one Workflow is submitted with. */
export interface WorkflowArguments {
  /** `spec.arguments.parameters`, by name. */
  parameters: Record<string, string>;
  /** `env_vars` of update-config: written to a Secret owned by the Workflow, never into a parameter. */
  env?: Record<string, string>;
}

/** What the table may consult. */
export interface ArgumentContext {
  /** `PDS_REGISTRY`, e.g. `registry.example.com/pds`. */
  registry: string;
  /** `PDS_DOMAIN`. */
  domain: string;
  /** The tenant's `pds.dev/uid` (create-tenant: a new one). */
  tenantUid: string;
  /** The Workflow's name (the env Secret is `<name>-env`). */
  workflowName: string;
  /**
   * A tenant admin overrode a freeze window (`override_reason`): the templates that sync then end with a manual sync of
   * the Application (`manual_sync=true`), which the AppProject's deny windows let through (`manualSync: true`) while
   * they hold Argo CD's automated sync (issue 20 item 3).
   */
  override?: boolean;
  /**
   * The source the service's Application records (`pds.dev/dockerfile-repo`, `pds.dev/dockerfile-path`), for the
   * operations that run an image built before (rollback-service, preview-deploy): images are keyed by source.
   */
  service?: { repo?: string; dockerfilePath?: string };
}

/** `manual_sync` for the templates that declare it, only when the execution overrode a freeze window. */
function manualSync(ctx: ArgumentContext): { manual_sync?: string } {
  return ctx.override ? { manual_sync: 'true' } : {};
}

export type ArgumentFactory<K extends OperationId> = (params: OperationParams<K>, ctx: ArgumentContext) => WorkflowArguments;
export type ClusterOperationTable = { readonly [K in OperationId]: ArgumentFactory<K> };


/** The Secret that carries a Workflow's environment: `<workflow>-env`. */
export function envSecretName(workflowName: string): string {
  return `${workflowName}-env`;
}

/**
 * The image a deploy or onboarding builds (`core/images.ts`: keyed by its source, built once) and the push credential
 * of that source's path: `push_secret` names the Secret a platform team may make for it (deploy/README.md "Builds and
 * credentials").
 */
function buildArguments(p: { dockerfile_repo: string; git_tag: string; dockerfile_path?: string }, ctx: ArgumentContext): Record<string, string> {
  const source = { repo: p.dockerfile_repo, tag: p.git_tag, dockerfilePath: p.dockerfile_path ?? DEFAULT_BUILD_FILE };
  return { image: sourceImage(ctx.registry, source), push_secret: pushSecretName(source) };
}

/** The image of a tag the service ran before, by the source its Application records. */
function builtImage(tag: string, ctx: ArgumentContext): string {
  return sourceImage(ctx.registry, { repo: ctx.service?.repo ?? '', tag, dockerfilePath: ctx.service?.dockerfilePath || DEFAULT_BUILD_FILE });
}

export const clusterOperations: ClusterOperationTable = {
  'deploy-service': (p, ctx) => {
    const base = {
      ...parameterStrings(p, ['env_vars']),
      tenant_uid: ctx.tenantUid,
      application: applicationName(p.team_name, p.component_name),
      ...manualSync(ctx),
      // The template writes a canary's steps as given: the default is pds's, stated once (core/rollouts.ts).
      ...(p.action !== 'deploy' && p.strategy === 'canary' && { canary_steps: p.canary_steps ?? DEFAULT_CANARY_STEPS }),
    };
    switch (p.action) {
      case 'onboard':
        return { parameters: { ...base, host: serviceHost(p.team_name, p.component_name, ctx.domain), ...buildArguments(p, ctx) } };
      case 'deploy':
        return { parameters: { ...base, ...buildArguments(p, ctx) } };
      case 'update-config': {
        // write-rollout's HTTPRoute names the host; the environment steps run only with env_vars.
        const withHost = p.strategy ? { ...base, host: serviceHost(p.team_name, p.component_name, ctx.domain) } : base;
        if (!p.env_vars) return { parameters: withHost };
        return {
          parameters: { ...withHost, env_secret: envSecretName(ctx.workflowName), env_keys: p.env_vars.map((v) => v.key).join(',') },
          env: Object.fromEntries(p.env_vars.map((v) => [v.key, v.value])),
        };
      }
    }
  },
  'create-tenant': (p, ctx) => ({ parameters: { ...parameterStrings(p), tenant_uid: ctx.tenantUid } }),
  'delete-tenant': (p, ctx) => ({ parameters: { ...parameterStrings(p), tenant_uid: ctx.tenantUid } }),
  'provision-database': (p, ctx) => ({
    parameters: { ...parameterStrings(p), tenant_uid: ctx.tenantUid, application: applicationName(p.team_name, p.component_name) },
  }),
  'retire-service': (p, ctx) => ({
    parameters: { ...parameterStrings(p), tenant_uid: ctx.tenantUid, application: applicationName(p.team_name, p.component_name) },
  }),
  'rollback-service': (p, ctx) => ({
    parameters: {
      ...parameterStrings(p),
      tenant_uid: ctx.tenantUid,
      application: applicationName(p.team_name, p.component_name),
      image: builtImage(p.target_tag, ctx),
      ...manualSync(ctx),
    },
  }),
  'preview-deploy': (p, ctx) => {
    const preview = previewName(p.component_name, p.image_tag);
    return {
      parameters: {
        ...parameterStrings(p),
        tenant_uid: ctx.tenantUid,
        application: applicationName(p.team_name, p.component_name),
        preview_name: preview,
        preview_application: applicationName(p.team_name, preview),
        host: serviceHost(p.team_name, preview, ctx.domain),
        image: builtImage(p.image_tag, ctx),
      },
    };
  },
  'preview-delete': (p, ctx) => {
    const preview = previewName(p.component_name, p.image_tag);
    return {
      parameters: { ...parameterStrings(p), tenant_uid: ctx.tenantUid, preview_name: preview, preview_application: applicationName(p.team_name, preview) },
    };
  },
};
