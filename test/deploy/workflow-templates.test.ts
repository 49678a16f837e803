/**
 * The WorkflowTemplates of deploy/workflows/ against the operation contract and against the Argo projects' published
 * CRD schemas (structural check with Ajv over each CRD's openAPIV3Schema). The published CRDs are reference material
 * outside the repository: `PDS_ARGO_CRDS_DIR`, default `../shared/k8s/crds`; without them those checks are skipped
 * and the output says so.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../core/operations/index.js';
import { workflowTemplateName } from '../../core/names.js';
import type { Template, WorkflowTemplate } from '../fixtures/argo-steps/runner.js';
import { substitute } from '../fixtures/argo-steps/variables.js';
import { loadWorkflowTemplates } from '../cluster/deploy.js';

const templates = loadWorkflowTemplates();
const contracts = Object.values(OPERATIONS);
const operations = contracts.map((c) => c.id);

/** Values pds derives and passes, by operation (issue 10 "deploy/"; documented in deploy/README.md). */
const DERIVED: Record<string, string[]> = {
  // image_digest: a digest the door verified or a promotion took (beside the contract's parameters, never a caller's).
  // manual_sync: "true" after a freeze override (adapters/kubernetes/operations.ts), so Argo CD syncs by hand.
  'deploy-service': ['tenant_uid', 'application', 'host', 'image', 'image_digest', 'push_secret', 'env_secret', 'env_keys', 'manual_sync'],
  'create-tenant': ['tenant_uid'],
  'provision-database': ['tenant_uid', 'application'],
  'retire-service': ['tenant_uid', 'application'],
  'delete-tenant': ['tenant_uid'],
  'rollback-service': ['tenant_uid', 'application', 'image', 'manual_sync'],
  'preview-deploy': ['tenant_uid', 'application', 'preview_name', 'preview_application', 'host', 'image'],
  'preview-delete': ['tenant_uid', 'preview_name', 'preview_application'],
};

const parametersOf = (t: WorkflowTemplate) => (t.spec.arguments?.parameters ?? []).map((p) => p.name);
const leafTemplates = (t: WorkflowTemplate): Template[] => t.spec.templates.filter((x) => !x.steps);

describe('deploy/workflows/ and the operation contract', () => {
  it('has one WorkflowTemplate per operation, named as the operation', () => {
    for (const id of operations) expect(templates.has(workflowTemplateName(id)), id).toBe(true);
    expect([...templates.keys()].sort()).toEqual([...operations, 'pds-steps'].sort());
  });

  it('takes exactly the operation parameters (core/operations) plus what pds derives, and no secret parameter', () => {
    expect(OPERATIONS['deploy-service'].secretParameters).toContain('env_vars');
    for (const contract of contracts) {
      const declared = parametersOf(templates.get(contract.id)!);
      const plain = Object.keys(contract.parameters.shape).filter((k) => !contract.secretParameters.includes(k));
      expect(declared.sort(), contract.id).toEqual([...plain, ...DERIVED[contract.id]!].sort());
      for (const secret of contract.secretParameters) expect(declared, contract.id).not.toContain(secret);
    }
  });

  it('gives scripts their values as environment variables only, so no parameter can change a script', () => {
    for (const t of templates.values()) {
      for (const leaf of leafTemplates(t)) if (leaf.script) expect(leaf.script.source, `${t.metadata.name}/${leaf.name}`).not.toContain('{{');
    }
  });

  it('runs tenant code (the Dockerfile build) with no credential: no Secret mounted or in env, no ServiceAccount token, no push', () => {
    type Pod = Template & { automountServiceAccountToken?: boolean; executor?: { serviceAccountName?: string } };
    const builds = [...templates.values()].flatMap((t) => leafTemplates(t).map((leaf) => [t.metadata.name, leaf as Pod] as const))
      .filter(([, leaf]) => [...(leaf.initContainers ?? []), leaf.container, leaf.script].some((c) => c?.image.startsWith('gcr.io/kaniko-project/executor')));
    expect(builds.map(([t, leaf]) => `${t}/${leaf.name}`)).toEqual(['pds-steps/build-image']);
    for (const [, leaf] of builds) {
      // Argo mounts the executor account's token into its own wait container only (template.executor).
      expect(leaf.automountServiceAccountToken).toBe(false);
      expect(leaf.executor?.serviceAccountName).toBe('pds-workflow-executor');
      const secretVolumes = new Set((leaf.volumes ?? []).filter((v) => v.secret).map((v) => v.name));
      for (const c of [...(leaf.initContainers ?? []), leaf.container!]) {
        if (!c.image.startsWith('gcr.io/kaniko-project/executor')) continue;
        expect(c.args).toContain('--no-push');
        expect((c.volumeMounts ?? []).filter((m) => secretVolumes.has(m.name) || m.mountPath.startsWith('/kaniko/.docker'))).toEqual([]);
        expect((c.env ?? []).filter((e) => e.valueFrom?.secretKeyRef)).toEqual([]);
        expect((c.envFrom ?? []).filter((e) => e.secretRef)).toEqual([]);
        expect((c.env ?? []).map((e) => e.name).filter((n) => /DOCKER|TOKEN|PASSWORD|SECRET|CREDENTIAL/i.test(n))).toEqual([]);
      }
      // The push runs no tenant code: it is the pod's last container and only copies the built tarball.
      expect(leaf.container!.image).toMatch(/^gcr\.io\/go-containerregistry\/crane/);
    }
  });

  it('runs every operation as the pds-workflow ServiceAccount in the workflow namespace', () => {
    for (const name of operations) {
      const t = templates.get(name)!;
      expect(t.metadata.namespace).toBe('pds-workflows');
      expect(t.spec.serviceAccountName).toBe('pds-workflow');
      expect(t.spec.entrypoint).toBe('main');
    }
  });
});

const crdsDir = path.resolve(process.env.PDS_ARGO_CRDS_DIR ?? path.join(import.meta.dirname, '../../../shared/k8s/crds'));
const haveCrds = existsSync(crdsDir);
if (!haveCrds) {
  process.stdout.write(`\nArgo's published CRDs not found at ${crdsDir} (set PDS_ARGO_CRDS_DIR): the CRD schema checks are skipped.\n`);
}

/**
 * An Ajv validator for a published CRD's schema (x-kubernetes-* keywords and formats ignored). The CRD is read as
 * plain YAML on purpose: Ajv needs the schema's wire JSON, not client-node's model of it, and nothing here goes to an
 * API server (where loadYaml is a must, see test/fixtures/kube-apiserver.ts).
 */
function crdValidator(file: string) {
  const crd = parse(readFileSync(path.join(crdsDir, file), 'utf8')) as { spec: { versions: { schema: { openAPIV3Schema: object } }[] } };
  return new Ajv({ strict: false, validateFormats: false, allErrors: true }).compile(crd.spec.versions[0]!.schema.openAPIV3Schema);
}

describe.skipIf(!haveCrds)(`deploy/workflows/ against Argo's published CRD schemas (${crdsDir})`, () => {
  it('every WorkflowTemplate validates against argoproj.io_workflowtemplates.yaml', () => {
    const validate = crdValidator('argoproj.io_workflowtemplates.yaml');
    for (const [name, t] of templates) expect(validate(t) ? [] : validate.errors, name).toEqual([]);
    expect(validate({ apiVersion: 'argoproj.io/v1alpha1', kind: 'WorkflowTemplate', metadata: {} })).toBe(false);
  });

  it('a Workflow as pds submits it validates against argoproj.io_workflows.yaml', () => {
    const validate = crdValidator('argoproj.io_workflows.yaml');
    const workflow = {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Workflow',
      metadata: { name: 'create-tenant-x7k2p', namespace: 'pds-workflows', labels: { 'pds.dev/operation': 'create-tenant' }, annotations: { 'pds.dev/user': 'alice' } },
      spec: { workflowTemplateRef: { name: 'create-tenant' }, arguments: { parameters: [{ name: 'team_name', value: 'acme' }] } },
    };
    expect(validate(workflow) ? [] : validate.errors).toEqual([]);
  });

  it("the Application that apply-application writes validates against Argo CD's application-crd.yaml", () => {
    const validate = crdValidator('application-crd.yaml');
    const apply = templates.get('pds-steps')!.spec.templates.find((t) => t.name === 'apply-application')!;
    const scope = Object.fromEntries(
      apply.inputs!.parameters!.map((p) => [`inputs.parameters.${p.name}`, p.name === 'port' ? '8787' : `sample-${p.name.replaceAll('_', '-')}`]),
    );
    const application = parse(substitute(apply.resource!.manifest!, { ...scope, 'workflow.annotations.pds.dev/user': 'alice@example.com' }));
    expect(validate(application) ? [] : validate.errors).toEqual([]);
    expect(validate({ ...application, spec: { ...application.spec, destination: 'nowhere' } })).toBe(false);
  });
});
