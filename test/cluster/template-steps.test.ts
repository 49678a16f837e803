/**
 * The eight WorkflowTemplates of deploy/workflows/ run for real: each Workflow pds would submit is created on the
 * test API server under pds's own ServiceAccount, then its steps run locally the way Argo would
 * (test/fixtures/argo-steps): parameters substituted, steps in order, kubectl against the API server under the
 * pds-workflow ServiceAccount, git against a local bare GitOps repository. The test checks what they leave behind.
 *
 * Not exercised here (stubbed only at the container boundary, listed in the output and in deploy/README.md):
 * the image build and push (kaniko's and crane's images replaced by test/fixtures/argo-steps/kaniko-stub.sh and
 * test/fixtures/argo-steps/crane-stub.sh), and GitHub itself
 * (the clone runs for real, against local bare repositories through git's url.insteadOf). Argo CD is played by the
 * test: it server-side-validates the committed manifests and removes Application finalizers.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { applicationName, previewName, serviceHost } from '../../core/names.js';
import { sourceImage } from '../../core/images.js';
import { startRegistry, type RegistryStandIn } from '../fixtures/oci-registry.js';
import { BLUE_GREEN_AUTO_PROMOTION_SECONDS, errorRateQuery } from '../../core/rollouts.js';
import { LocalArgo, shutdownNodeMessage, type RunResult } from '../fixtures/argo-steps/runner.js';
import { BUILD_IMAGE_STUBS } from '../fixtures/argo-steps/pods.js';
import { adminKubeConfig } from '../fixtures/kube-apiserver.js';
import { installDeploy, loadWorkflowTemplates, serviceAccountKubeConfig } from './deploy.js';
import { bareRepository, checkout, fileAt, filesUnder, git } from './gitops.js';
import { waitOnlyTemplate } from './rollout-fixtures.js';
import { until } from '../helpers/until.js';

const WORKFLOWS = 'pds-workflows';
const ARGOCD = 'argocd';
const REGISTRY = 'registry.test/pds';
const DOMAIN = 'apps.test';
const TEAM = 'acme';
const CALLER = 'alice@example.com';
const REGISTRY_SECRET = `registry-push-${randomUUID()}`;

let admin: KubeConfig;
let pds: KubeConfig;
let work: string;
let gitopsRepo: string;
let registryLog: string;
let runner: ConstructorParameters<typeof LocalArgo>[0];
const ran = new Set<string>();
const stubbed = new Set<string>();
let tenantUid: string;

// The values pds derives, from the one place it derives them.
const application = (service: string) => applicationName(TEAM, service);
const host = (service: string) => serviceHost(TEAM, service, DOMAIN);
// Images are keyed by their source (core/images.ts); the tests name one per service as if each had its repository.
const image = (service: string, tag: string) => sourceImage(REGISTRY, { repo: `acme/${service}`, tag, dockerfilePath: 'docker/Dockerfile' });
let registry: RegistryStandIn;
/** `<image>@<digest>` as the registry stand-in resolves its tag: what manifests name. */
const pinned = (ref: string) => {
  const name = ref.slice(ref.indexOf('/') + 1, ref.lastIndexOf(':'));
  return `${ref}@${registry.resolve(name, ref.slice(ref.lastIndexOf(':') + 1))}`;
};

/**
 * Submit like pds: the Workflow created as pds's ServiceAccount (with the labels and caller annotation of issue 10),
 * then run locally. `env` (update-config) goes to a Secret owned by the Workflow, never into a parameter. `before` is
 * called before each step starts (e.g. to set a shutdown as `argo stop` would).
 */
async function submit(
  operation: string,
  parameters: Record<string, string>,
  env?: Record<string, string>,
  before?: (path: string, argo: LocalArgo) => void,
): Promise<RunResult & { name: string; uid: string }> {
  const name = `${operation}-${randomUUID().slice(0, 5)}`;
  const all = { ...parameters };
  if (env) Object.assign(all, { env_secret: `${name}-env`, env_keys: Object.keys(env).join(',') });
  const workflow = {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Workflow',
    metadata: {
      name,
      namespace: WORKFLOWS,
      labels: {
        'pds.dev/operation': operation,
        'pds.dev/tenant': parameters.team_name!,
        ...(parameters.component_name ? { 'pds.dev/service': parameters.component_name } : {}),
        'pds.dev/managed-by': 'pds',
      },
      annotations: { 'pds.dev/user': CALLER },
    },
    spec: {
      workflowTemplateRef: { name: operation },
      arguments: { parameters: Object.entries(all).map(([n, value]) => ({ name: n, value })) },
    },
  };
  const created: KubernetesObject = await pds.makeApiClient(KubernetesObjectApi).create(workflow);
  const uid = created.metadata!.uid!;
  if (env) {
    await pds.makeApiClient(CoreV1Api).createNamespacedSecret({
      namespace: WORKFLOWS,
      body: {
        metadata: { name: `${name}-env`, ownerReferences: [{ apiVersion: 'argoproj.io/v1alpha1', kind: 'Workflow', name, uid }] },
        stringData: env,
      },
    });
  }
  const argo: LocalArgo = new LocalArgo(runner, { beforeStep: async (at) => before?.(at, argo) });
  const result = await argo.execute({
    name,
    uid,
    annotations: workflow.metadata.annotations,
    labels: workflow.metadata.labels,
    workflowTemplateRef: operation,
    parameters: workflow.spec.arguments.parameters,
  });
  ran.add(operation);
  for (const node of result.nodes) if (node.stubbed) stubbed.add(`${node.template} → ${node.stubbed}`);
  return { ...result, name, uid };
}

async function getObject(apiVersion: string, kind: string, namespace: string | undefined, name: string): Promise<KubernetesObject | undefined> {
  return admin
    .makeApiClient(KubernetesObjectApi)
    .read({ apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) } })
    .catch((err: { code?: number }) => {
      if (err.code === 404) return undefined;
      throw err;
    });
}
const getApplication = (name: string) => getObject('argoproj.io/v1alpha1', 'Application', ARGOCD, name) as Promise<(KubernetesObject & { spec: any }) | undefined>;

/** Play Argo CD's finalizer: it deletes what the Application applied, then lets the Application go. */
async function finalizeApplication(name: string): Promise<void> {
  await admin
    .makeApiClient(CustomObjectsApi)
    .patchNamespacedCustomObject({ group: 'argoproj.io', version: 'v1alpha1', namespace: ARGOCD, plural: 'applications', name, body: [{ op: 'remove', path: '/metadata/finalizers' }] });
}

/** Play Argo CD's sync, server-side: `kubectl apply` of the committed directory (dry run unless `create`). */
function argoCdSync(dir: string, create = false): string {
  const tree = checkout(gitopsRepo, work);
  return execFileSync(
    'kubectl',
    ['--kubeconfig', inject('kubeconfigPath'), 'apply', '-n', TEAM, '-f', path.join(tree, 'tenants', TEAM, dir), ...(create ? [] : ['--dry-run=server'])],
    { encoding: 'utf8' },
  );
}

beforeAll(async () => {
  admin = adminKubeConfig(inject('kubeconfigPath'));
  await installDeploy(admin);
  work = mkdtempSync(path.join(tmpdir(), 'pds-template-steps-'));
  registryLog = path.join(work, 'registry.jsonl');
  registry = await startRegistry();
  gitopsRepo = bareRepository(path.join(work, 'gitops.git'), [{ files: { 'README.md': '# GitOps repository\n' } }]);
  const web = (greeting: string) => ({
    'docker/Dockerfile': 'FROM node:20-alpine\nCOPY server.js .\nCMD ["node", "server.js"]\n',
    'server.js': `console.log(${JSON.stringify(greeting)});\n`,
  });
  bareRepository(path.join(work, 'github/acme/web.git'), [
    { files: web('0.1.0'), tag: '0.1.0' },
    { files: web('0.2.0'), tag: '0.2.0' },
  ]);
  // The platform team's settings, pointed at the local GitOps repository.
  await admin.makeApiClient(CoreV1Api).patchNamespacedConfigMap({
    name: 'pds-workflow-config',
    namespace: WORKFLOWS,
    body: [{ op: 'replace', path: '/data/GITOPS_REPO', value: `file://${gitopsRepo}` }],
  });
  // The shared push credential, as a platform team creates it (deploy/README.md), holding a value the build must not see.
  await admin.makeApiClient(CoreV1Api).createNamespacedSecret({
    namespace: WORKFLOWS,
    body: {
      metadata: { name: 'pds-registry-credentials' },
      type: 'kubernetes.io/dockerconfigjson',
      stringData: { '.dockerconfigjson': JSON.stringify({ auths: { 'registry.test': { auth: Buffer.from(`pds:${REGISTRY_SECRET}`).toString('base64') } } }) },
    },
  });
  pds = (await serviceAccountKubeConfig(admin, { namespace: 'pds', name: 'pds' }, work)).kc;
  const workflowAccount = await serviceAccountKubeConfig(admin, { namespace: WORKFLOWS, name: 'pds-workflow' }, work);
  runner = {
    templates: loadWorkflowTemplates(),
    cluster: admin,
    namespace: WORKFLOWS,
    kubeconfigPath: workflowAccount.path,
    images: {
      'alpine/k8s': { local: true },
      'alpine/git': { local: true },
      ...BUILD_IMAGE_STUBS,
    },
    gitConfig: { [`url.file://${work}/github/.insteadOf`]: 'https://github.com/' },
    stubEnv: { PDS_REGISTRY_LOG: registryLog, PDS_BUILD_LOG: path.join(work, 'builds.log'), PDS_REGISTRY_URL: registry.url },
    workDir: work,
  };
});

afterAll(async () => {
  await registry?.close();
  await admin?.makeApiClient(CoreV1Api).deleteNamespacedSecret({ name: 'pds-registry-credentials', namespace: WORKFLOWS }).catch(() => undefined);
  process.stdout.write(
    '\nNot exercised by the template-steps test (stubbed at the container boundary):\n' +
      [...stubbed].map((s) => `  - ${s} (image build and push: no registry or container runtime here)\n`).join('') +
      '  - git clone from https://github.com (runs for real against local bare repositories via url.insteadOf)\n' +
      '  - Argo CD (played by the test: server-side dry-run of the committed manifests, finalizer removal)\n',
  );
  if (work) rmSync(work, { recursive: true, force: true });
});

const pushed = () => (existsSync(registryLog) ? readFileSync(registryLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);

describe.sequential('WorkflowTemplate steps against the API server and a GitOps repository', () => {
  it('create-tenant makes the namespace, quota, member RoleBindings and AppProject, and refuses an existing tenant', async () => {
    tenantUid = randomUUID();
    const description = 'Payments "APIs"; $(touch /tmp/pwned) `id`\nsecond line';
    const r = await submit('create-tenant', {
      team_name: TEAM,
      tenant_uid: tenantUid,
      display_name: 'Acme Payments',
      description,
      contact_email: 'acme@example.com',
      admins: 'alice@example.com,group:acme-admins',
      members: 'bob',
      viewers: 'carol, bob',
      cpu: '2',
      memory: '4Gi',
      pods: '10',
    });
    expect(r.phase, r.message).toBe('Succeeded');

    const ns = await admin.makeApiClient(CoreV1Api).readNamespace({ name: TEAM });
    expect(ns.metadata!.labels).toMatchObject({ 'pds.dev/tenant': TEAM, 'pds.dev/managed-by': 'pds' });
    expect(ns.metadata!.annotations).toMatchObject({
      'pds.dev/display-name': 'Acme Payments',
      'pds.dev/description': description,
      'pds.dev/contact-email': 'acme@example.com',
      'pds.dev/uid': tenantUid,
      'pds.dev/user': CALLER,
    });
    expect(existsSync('/tmp/pwned')).toBe(false);

    // The controller manager accounts the quota: status.hard is what resources reads.
    const quota = await until('ResourceQuota status', async () => {
      const q = await admin.makeApiClient(CoreV1Api).readNamespacedResourceQuota({ name: 'pds-quota', namespace: TEAM });
      return q.status?.hard ? q : undefined;
    }, 20);
    expect(quota.spec!.hard).toEqual({ cpu: '2', memory: '4Gi', pods: '10' });
    expect(quota.status!.used).toMatchObject({ pods: '0' });

    const bindings = (await admin.makeApiClient(RbacAuthorizationV1Api).listNamespacedRoleBinding({ namespace: TEAM, labelSelector: 'pds.dev/role' })).items;
    const members = bindings.map((b) => ({
      name: b.metadata!.name,
      role: b.metadata!.labels!['pds.dev/role'],
      member: b.metadata!.annotations!['pds.dev/member'],
      clusterRole: b.roleRef.name,
      subject: `${b.subjects![0]!.kind}:${b.subjects![0]!.name}`,
    }));
    expect(members.sort((a, b) => a.name!.localeCompare(b.name!))).toEqual([
      { name: 'pds-admin-alice@example.com', role: 'admin', member: 'alice@example.com', clusterRole: 'admin', subject: 'User:alice@example.com' },
      { name: 'pds-admin-group:acme-admins', role: 'admin', member: 'group:acme-admins', clusterRole: 'admin', subject: 'Group:acme-admins' },
      { name: 'pds-member-bob', role: 'member', member: 'bob', clusterRole: 'edit', subject: 'User:bob' },
      { name: 'pds-viewer-carol', role: 'viewer', member: 'carol', clusterRole: 'view', subject: 'User:carol' },
    ]);
    const project = (await getObject('argoproj.io/v1alpha1', 'AppProject', ARGOCD, TEAM)) as KubernetesObject & { spec: any };
    expect(project.spec.destinations).toEqual([{ server: 'https://kubernetes.default.svc', namespace: TEAM }]);
    expect(project.spec.sourceRepos).toEqual([`file://${gitopsRepo}`]);

    const again = await submit('create-tenant', { team_name: TEAM, tenant_uid: randomUUID() });
    expect(again.phase).toBe('Failed');
    expect(again.nodes.find((n) => n.phase === 'Failed')!.path).toBe('create-namespace');
    const still = await admin.makeApiClient(CoreV1Api).readNamespace({ name: TEAM });
    expect(still.metadata!.annotations!['pds.dev/uid']).toBe(tenantUid);
  });

  it('deploy-service action=onboard clones, builds, commits the manifests and creates the Application', async () => {
    const r = await submit('deploy-service', {
      action: 'onboard',
      team_name: TEAM,
      component_name: 'web',
      tenant_uid: tenantUid,
      application: application('web'),
      host: host('web'),
      image: image('web', '0.1.0'),
      git_tag: '0.1.0',
      dockerfile_repo: 'acme/web',
      dockerfile_path: 'docker/Dockerfile',
      port: '8787',
      service_template: 'default',
      health_check_path: '/api/health',
    });
    expect(r.phase, r.message).toBe('Succeeded');
    // A rolling service (no strategy given) gets no Rollout; without an override nothing syncs by hand.
    // The exit handler (issue 22) has nothing to undo after a success: its step is skipped.
    expect(r.nodes.filter((n) => n.phase === 'Skipped').map((n) => n.path).sort()).toEqual(['deploy', 'onExit/restore', 'onboard/write-rollout', 'sync-now', 'update-config']);
    // The build got the repository at the tag (cloned for real) and the Dockerfile at dockerfile_path; the push, a
    // container of its own, used the registry credential.
    expect(pushed()).toEqual([expect.objectContaining({ destination: image('web', '0.1.0'), dockerfile: 'docker/Dockerfile', credential: 'shared' })]);
    // What the tenant's Dockerfile could reach (kaniko runs RUN in the build container): no registry or git
    // credential in its environment or files, no ServiceAccount credentials (KUBECONFIG stands in for the token).
    const build = readFileSync(path.join(work, 'builds.log'), 'utf8');
    expect(build).toContain(`=== build of ${image('web', '0.1.0')}`);
    expect(build).not.toContain(REGISTRY_SECRET);
    expect(build).not.toMatch(/^(KUBECONFIG|DOCKER_CONFIG|GIT_PASSWORD|GIT_USERNAME)=/m);
    expect(build.split('=== files\n')[1]!.trim().split('\n')).toEqual(['./src/docker/Dockerfile', './src/server.js']);

    expect(filesUnder(gitopsRepo, 'tenants/acme/web')).toEqual([
      'tenants/acme/web/deployment.yaml',
      'tenants/acme/web/ingress.yaml',
      'tenants/acme/web/service.yaml',
    ]);
    const deployment = parse(fileAt(gitopsRepo, 'tenants/acme/web/deployment.yaml')!);
    const container = deployment.spec.template.spec.containers[0];
    expect(deployment.metadata).toEqual({ name: 'acme-web', labels: { 'pds.dev/tenant': TEAM, 'pds.dev/service': 'web', 'pds.dev/managed-by': 'pds' } });
    expect(container.image).toBe(pinned(image('web', '0.1.0')));
    expect(container.image).toMatch(/@sha256:[0-9a-f]{64}$/);
    expect(container.ports).toEqual([{ name: 'http', containerPort: 8787 }]);
    expect(container.readinessProbe.httpGet).toEqual({ path: '/api/health', port: 'http' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/api/health', port: 'http' });
    expect(container.resources.requests).toEqual({ cpu: '100m', memory: '128Mi' });
    const ingress = parse(fileAt(gitopsRepo, 'tenants/acme/web/ingress.yaml')!);
    expect(ingress.spec.rules[0].host).toBe(`acme-web.${DOMAIN}`);

    const app = (await getApplication('acme-web'))!;
    expect(app.metadata!.labels).toEqual({
      'pds.dev/tenant': TEAM,
      'pds.dev/service': 'web',
      'pds.dev/component-type': 'base-service',
      'pds.dev/managed-by': 'pds',
    });
    expect(app.metadata!.annotations).toMatchObject({
      'pds.dev/host': host('web'),
      'pds.dev/port': '8787',
      'pds.dev/health-check-path': '/api/health',
      'pds.dev/image-tag': '0.1.0',
      'pds.dev/user': CALLER,
      'pds.dev/dockerfile-repo': 'acme/web',
      'pds.dev/dockerfile-path': 'docker/Dockerfile',
      'pds.dev/service-template': 'default',
    });
    expect(app.spec).toMatchObject({
      project: TEAM,
      source: { repoURL: `file://${gitopsRepo}`, targetRevision: 'main', path: 'tenants/acme/web' },
      destination: { server: 'https://kubernetes.default.svc', namespace: TEAM },
    });

    // Argo CD's sync, played for real: the API server takes the manifests, and the ReplicaSet controller's pod is
    // admitted under the tenant's quota (cpu/memory requests set).
    argoCdSync('web', true);
    const pods = await until('a pod of acme-web', async () => {
      const list = await admin.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: TEAM, labelSelector: 'pds.dev/service=web' });
      return list.items.length > 0 ? list.items : undefined;
    }, 30);
    expect(pods[0]!.spec!.containers[0]!.resources!.requests).toEqual({ cpu: '100m', memory: '128Mi' });
  });

  it('deploy-service refuses a second onboarding and a deploy of a service never onboarded', async () => {
    const common = { team_name: TEAM, tenant_uid: tenantUid, git_tag: '0.2.0', dockerfile_repo: 'acme/web', port: '8787' };
    const twice = await submit('deploy-service', { ...common, action: 'onboard', component_name: 'web', application: 'acme-web', image: image('web', '0.2.0') });
    expect(twice.phase).toBe('Failed');
    expect(twice.nodes.find((n) => n.phase === 'Failed')!.path).toBe('onboard/check-new');
    const unknown = await submit('deploy-service', { team_name: TEAM, tenant_uid: tenantUid, action: 'deploy', component_name: 'api', application: 'acme-api', git_tag: '0.2.0', dockerfile_repo: 'acme/web', image: image('api', '0.2.0') });
    expect(unknown.phase).toBe('Failed');
    expect(pushed().map((p) => p.destination)).toEqual([image('web', '0.1.0')]);
    const wrongTenant = await submit('deploy-service', { ...common, action: 'deploy', component_name: 'web', tenant_uid: randomUUID(), application: 'acme-web', image: image('web', '0.2.0') });
    expect(wrongTenant.phase).toBe('Failed');
    expect(wrongTenant.nodes.find((n) => n.phase === 'Failed')!.path).toBe('check-tenant');
  });

  it('deploy-service action=deploy builds the new tag and commits it', async () => {
    const r = await submit('deploy-service', {
      action: 'deploy', team_name: TEAM, component_name: 'web', tenant_uid: tenantUid, application: 'acme-web',
      git_tag: '0.2.0', dockerfile_repo: 'acme/web', dockerfile_path: 'docker/Dockerfile', image: image('web', '0.2.0'),
    });
    expect(r.phase, r.message).toBe('Succeeded');
    expect(pushed().map((p) => p.destination)).toEqual([image('web', '0.1.0'), image('web', '0.2.0')]);
    expect(parse(fileAt(gitopsRepo, 'tenants/acme/web/deployment.yaml')!).spec.template.spec.containers[0].image).toBe(pinned(image('web', '0.2.0')));
    expect((await getApplication('acme-web'))!.metadata!.annotations!['pds.dev/image-tag']).toBe('0.2.0');
  });

  it('deploy-service of a source already in the registry skips the build and deploys its digest; a pinned digest must be there', async () => {
    const deploy = {
      action: 'deploy', team_name: TEAM, component_name: 'web', tenant_uid: tenantUid, application: 'acme-web',
      git_tag: '0.1.0', dockerfile_repo: 'acme/web', dockerfile_path: 'docker/Dockerfile', image: image('web', '0.1.0'),
    };
    const reuse = await submit('deploy-service', deploy);
    expect(reuse.phase, reuse.message).toBe('Succeeded');
    const digest = pinned(image('web', '0.1.0')).split('@')[1]!;
    const find = reuse.nodes.find((n) => n.path === 'deploy/find-image')!;
    expect(find.mainLog!.trim()).toBe(`image ${image('web', '0.1.0')}@${digest} exists, build skipped`);
    const build = reuse.nodes.find((n) => n.path === 'deploy/build-image')!;
    expect(build.phase).toBe('Skipped');
    expect(build.message).toContain(`image ${image('web', '0.1.0')}@${digest} exists, build skipped`);
    expect(pushed()).toHaveLength(2); // nothing built or pushed again
    expect(parse(fileAt(gitopsRepo, 'tenants/acme/web/deployment.yaml')!).spec.template.spec.containers[0].image).toBe(`${image('web', '0.1.0')}@${digest}`);
    // The registry was asked with the shared credential (read), and nothing was written.
    expect(registry.requests.filter((r) => r.method === 'PUT')).toHaveLength(2);

    // A deploy pinned to a digest (a promotion) deploys that digest, and fails when the registry does not hold it.
    const pinnedDeploy = await submit('deploy-service', { ...deploy, image_digest: digest });
    expect(pinnedDeploy.phase, pinnedDeploy.message).toBe('Succeeded');
    const missing = await submit('deploy-service', { ...deploy, image_digest: `sha256:${'0'.repeat(64)}` });
    expect(missing.phase).toBe('Failed');
    expect(missing.nodes.find((n) => n.phase === 'Failed')!.path).toBe('deploy/find-image');
    expect(missing.message).toContain('is not in the registry');
    expect(pushed()).toHaveLength(2);
  });

  it('deploy-service stopped after its commit: the exit handler reverts it; terminated, nothing is undone; a commit of someone else since on the same line is kept and named', async () => {
    const deploy = (tag: string) => ({
      action: 'deploy', team_name: TEAM, component_name: 'web', tenant_uid: tenantUid, application: 'acme-web',
      git_tag: tag, dockerfile_repo: 'acme/web', dockerfile_path: 'docker/Dockerfile', image: image('web', tag),
    });
    const manifest = () => parse(fileAt(gitopsRepo, 'tenants/acme/web/deployment.yaml')!).spec.template.spec.containers[0].image;
    /** Set the shutdown as `argo stop|terminate` would, once set-image has committed `tag` (before wait-rollout). */
    const stopAfterCommit = (strategy: string, tag: string, meanwhile?: () => void) => (at: string, argo: LocalArgo) => {
      if (at !== 'deploy/wait-rollout') return;
      expect(manifest()).toBe(pinned(image('web', tag)));
      meanwhile?.();
      argo.shutdown(strategy);
    };
    const before = manifest();
    expect(before).toBe(pinned(image('web', '0.1.0')));

    const stopped = await submit('deploy-service', deploy('0.2.0'), undefined, stopAfterCommit('Stop', '0.2.0'));
    expect(stopped).toMatchObject({ phase: 'Failed', message: "Stopped with strategy 'Stop'" });
    expect(stopped.nodes.find((n) => n.path === 'deploy/wait-rollout')).toMatchObject({ phase: 'Failed', message: shutdownNodeMessage('Stop') });
    expect(stopped.nodes.some((n) => n.path === 'deploy/record-tag')).toBe(false);
    const restore = stopped.nodes.find((n) => n.path === 'onExit/restore/restore-service')!;
    expect(restore.phase, restore.log).toBe('Succeeded');
    expect(restore.log).toContain(`restored tenants/acme/web as it was before ${stopped.name}`);
    // No freeze override: Argo CD's automated sync applies the revert (asked to refresh), no sync by hand.
    expect(stopped.nodes.find((n) => n.path === 'onExit/restore/sync-restored')).toMatchObject({ phase: 'Skipped' });
    expect(manifest()).toBe(before);
    expect(git(gitopsRepo, 'log', '-1', '--format=%s', 'main').trim()).toBe(`acme/web: back to before ${stopped.name}, which ended Failed`);
    expect((await getApplication('acme-web'))!.metadata!.annotations).toMatchObject({ 'pds.dev/image-tag': '0.1.0', 'argocd.argoproj.io/refresh': 'normal' });

    // Terminate (cancel with force) runs no exit handler: the commit stays, the service may be left half-rolled.
    const terminated = await submit('deploy-service', deploy('0.2.0'), undefined, stopAfterCommit('Terminate', '0.2.0'));
    expect(terminated).toMatchObject({ phase: 'Failed', message: "Stopped with strategy 'Terminate'" });
    expect(terminated.nodes.filter((n) => n.path.startsWith('onExit'))).toEqual([]);
    expect(manifest()).toBe(pinned(image('web', '0.2.0')));

    // Someone changes the image line by hand after the run's commit: the revert would undo their change, so nothing is
    // reverted and the exit handler fails naming their commit.
    const byHand = (content: (text: string) => string, message: string) => {
      const tree = checkout(gitopsRepo, work);
      const file = path.join(tree, 'tenants/acme/web/deployment.yaml');
      writeFileSync(file, content(readFileSync(file, 'utf8')));
      git(tree, 'commit', '--quiet', '-am', message);
      git(tree, 'push', '--quiet', 'origin', 'main');
    };
    const unpinned = image('web', '0.1.0');
    const conflict = await submit('deploy-service', deploy('0.1.0'), undefined, stopAfterCommit('Stop', '0.1.0', () =>
      byHand((text) => text.replace(/^( *image:).*$/m, `$1 ${unpinned}`), 'acme/web: run 0.1.0 unpinned'),
    ));
    expect(conflict.phase).toBe('Failed');
    const refused = conflict.nodes.find((n) => n.path === 'onExit/restore/restore-service')!;
    expect(refused.phase).toBe('Failed');
    expect(refused.message).toContain(`could not restore tenants/acme/web as it was before ${conflict.name}: changed since by`);
    expect(refused.message).toContain('test: acme/web: run 0.1.0 unpinned');
    expect(manifest()).toBe(unpinned);
    byHand((text) => text.replace(/^( *image:).*$/m, `$1 ${pinned(unpinned)}`), 'acme/web: pinned again');
  });

  it('deploy-service action=update-config copies the Secret pds wrote into <application>-env, values never in a parameter', async () => {
    const env = { LOG_LEVEL: 'debug', API_KEY: 'v3ry-s3cret-value' };
    const r = await submit('deploy-service', { action: 'update-config', team_name: TEAM, component_name: 'web', tenant_uid: tenantUid, application: 'acme-web' }, env);
    expect(r.phase, r.message).toBe('Succeeded');
    const copied = await admin.makeApiClient(CoreV1Api).readNamespacedSecret({ name: 'acme-web-env', namespace: TEAM });
    expect(Object.fromEntries(Object.entries(copied.data!).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]))).toEqual(env);
    expect(copied.metadata!.labels).toMatchObject({ 'pds.dev/tenant': TEAM, 'pds.dev/service': 'web' });
    // The pods roll: the config revision in the committed Deployment is this workflow.
    expect(parse(fileAt(gitopsRepo, 'tenants/acme/web/deployment.yaml')!).spec.template.metadata.annotations['pds.dev/config-revision']).toBe(r.name);

    const stored = JSON.stringify(await getObject('argoproj.io/v1alpha1', 'Workflow', WORKFLOWS, r.name));
    expect(stored).toContain('"env_keys"');
    for (const value of Object.values(env)) {
      expect(stored).not.toContain(value);
      for (const node of r.nodes) expect(node.log).not.toContain(value);
    }
    // Owned by the Workflow: deleting the Workflow (pds may) deletes the Secret (the garbage collector does).
    await pds.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({ group: 'argoproj.io', version: 'v1alpha1', namespace: WORKFLOWS, plural: 'workflows', name: r.name });
    await until('the env Secret to be garbage-collected', async () => !(await getObject('v1', 'Secret', WORKFLOWS, `${r.name}-env`)), 30);
  });

  it('deploy-service update-config strategy writes the Rollout, AnalysisTemplate, Services and HTTPRoute per strategy, and rolling removes them', async () => {
    await admin.makeApiClient(CoreV1Api).patchNamespacedConfigMap({
      name: 'pds-workflow-config',
      namespace: WORKFLOWS,
      body: [{ op: 'add', path: '/data/PROMETHEUS_URL', value: 'http://prometheus.monitoring:9090' }],
    });
    const strategy = (s: Record<string, string>) =>
      submit('deploy-service', { action: 'update-config', team_name: TEAM, component_name: 'web', tenant_uid: tenantUid, application: 'acme-web', host: host('web'), ...s });
    const json = (file: string) => JSON.parse(fileAt(gitopsRepo, `tenants/acme/web/${file}`)!);
    const image0 = parse(fileAt(gitopsRepo, 'tenants/acme/web/deployment.yaml')!).spec.template.spec.containers[0].image;

    const canary = await strategy({ strategy: 'canary', canary_steps: '10%:2m,50%:5m' });
    expect(canary.phase, canary.message).toBe('Succeeded');
    expect(canary.nodes.filter((n) => n.phase !== 'Skipped').map((n) => n.path)).toEqual(['check-tenant', 'update-config/check-service/check', 'update-config/write-rollout/write']);
    expect(filesUnder(gitopsRepo, 'tenants/acme/web')).toEqual(expect.arrayContaining(['tenants/acme/web/rollout.json', 'tenants/acme/web/analysis.json', 'tenants/acme/web/service-canary.json', 'tenants/acme/web/httproute.json']));
    // The Deployment keeps the pod template, and so the one image reference, at no replicas; the Rollout runs the pods.
    const deployment = parse(fileAt(gitopsRepo, 'tenants/acme/web/deployment.yaml')!);
    expect(deployment.spec.replicas).toBe(0);
    expect(deployment.spec.template.spec.containers[0].image).toBe(image0);
    const rollout = json('rollout.json');
    process.stdout.write(`\ncanary Rollout written by write-rollout:\n${JSON.stringify(rollout.spec, null, 2)}\n`);
    expect(rollout.spec).toMatchObject({
      replicas: 1,
      workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'acme-web' },
      strategy: {
        canary: {
          stableService: 'acme-web',
          canaryService: 'acme-web-canary',
          trafficRouting: { plugins: { 'argoproj-labs/gatewayAPI': { httpRoute: 'acme-web', namespace: TEAM } } },
          steps: [
            { setWeight: 10 }, { pause: { duration: '2m' } }, { analysis: { templates: [{ templateName: 'acme-web' }] } },
            { setWeight: 50 }, { pause: { duration: '5m' } }, { analysis: { templates: [{ templateName: 'acme-web' }] } },
          ],
        },
      },
    });
    const analysis = json('analysis.json');
    expect(analysis.spec.metrics.map((m: any) => m.name)).toEqual(['health', 'error-rate']);
    // The probe path the Deployment uses (this service was onboarded with /api/health), on the canary's Service.
    expect(analysis.spec.metrics[0]).toMatchObject({ successCondition: 'true', provider: { web: { url: 'http://acme-web-canary.acme.svc/api/health' } } });
    expect(analysis.spec.metrics[1].provider.prometheus).toEqual({ address: 'http://prometheus.monitoring:9090', query: errorRateQuery(TEAM, 'acme-web-canary') });
    expect(json('httproute.json').spec).toEqual({
      parentRefs: [{ name: 'pds-gateway', namespace: 'gateway-system' }],
      hostnames: [host('web')],
      rules: [{ backendRefs: [{ name: 'acme-web', port: 80, weight: 100 }, { name: 'acme-web-canary', port: 80, weight: 0 }] }],
    });
    // Argo CD would apply them: the API server accepts every manifest against the Rollouts and Gateway API CRDs.
    const applied = argoCdSync('web');
    for (const object of ['rollout.argoproj.io/acme-web', 'analysistemplate.argoproj.io/acme-web', 'httproute.gateway.networking.k8s.io/acme-web', 'service/acme-web-canary']) {
      expect(applied).toContain(`${object} created (server dry run)`);
    }

    const blueGreen = await strategy({ strategy: 'blue-green' });
    expect(blueGreen.phase, blueGreen.message).toBe('Succeeded');
    expect(filesUnder(gitopsRepo, 'tenants/acme/web')).not.toContain('tenants/acme/web/httproute.json');
    expect(json('rollout.json').spec.strategy).toEqual({
      blueGreen: {
        activeService: 'acme-web', previewService: 'acme-web-preview', autoPromotionEnabled: true,
        autoPromotionSeconds: BLUE_GREEN_AUTO_PROMOTION_SECONDS, prePromotionAnalysis: { templates: [{ templateName: 'acme-web' }] },
      },
    });
    expect(json('service-preview.json').metadata.name).toBe('acme-web-preview');
    expect(argoCdSync('web')).toMatch(/service\/acme-web-preview created \(server dry run\)/);

    // wait-rollout, bounded: with no Rollouts controller here the release never settles, so the step gives up after
    // timeout_seconds, having asked Argo CD to refresh the Application (the annotation Argo CD removes once served).
    const applications = admin.makeApiClient(CustomObjectsApi);
    const application = { group: 'argoproj.io', version: 'v1alpha1', namespace: 'argocd', plural: 'applications', name: 'acme-web' };
    await applications.patchNamespacedCustomObject({ ...application, body: [{ op: 'remove', path: '/metadata/annotations/argocd.argoproj.io~1refresh' }] }).catch(() => undefined);
    const waitOnly = waitOnlyTemplate(WORKFLOWS, TEAM, 'web', 3);
    const waited = await LocalArgo.run({ ...runner, templates: new Map([...runner.templates, ['wait-only', waitOnly]]) }, {
      name: `wait-only-${randomUUID().slice(0, 5)}`, uid: randomUUID(), annotations: {}, labels: {}, workflowTemplateRef: 'wait-only', parameters: [],
    });
    expect(waited.phase).toBe('Failed');
    // The timeout says what it was waiting for.
    expect(waited.message).toBe('main: Error (exit code 1): the release of acme/web did not finish within 3 s (the Rollout acme-web does not exist yet); see its rollout in status');
    const refreshed = (await applications.getNamespacedCustomObject(application)) as KubernetesObject;
    expect(refreshed.metadata?.annotations?.['argocd.argoproj.io/refresh']).toBe('normal');

    const rolling = await strategy({ strategy: 'rolling' });
    expect(rolling.phase, rolling.message).toBe('Succeeded');
    expect(filesUnder(gitopsRepo, 'tenants/acme/web')).toEqual(['tenants/acme/web/deployment.yaml', 'tenants/acme/web/ingress.yaml', 'tenants/acme/web/service.yaml']);
    expect(parse(fileAt(gitopsRepo, 'tenants/acme/web/deployment.yaml')!).spec.replicas).toBe(1);
  });

  it('rollback-service returns to a tag deployed before and refuses one never deployed', async () => {
    const rollback = (tag: string) =>
      submit('rollback-service', { team_name: TEAM, component_name: 'web', target_tag: tag, tenant_uid: tenantUid, application: 'acme-web', image: image('web', tag) });
    const never = await rollback('0.3.0');
    expect(never.phase).toBe('Failed');
    expect(never.nodes.find((n) => n.phase === 'Failed')!.path).toBe('set-image');
    const r = await rollback('0.1.0');
    expect(r.phase, r.message).toBe('Succeeded');
    expect(parse(fileAt(gitopsRepo, 'tenants/acme/web/deployment.yaml')!).spec.template.spec.containers[0].image).toBe(pinned(image('web', '0.1.0')));
    expect((await getApplication('acme-web'))!.metadata!.annotations!['pds.dev/image-tag']).toBe('0.1.0');
    expect(pushed()).toHaveLength(2); // no rebuild
  });

  it('provision-database commits a CloudNativePG Cluster and labels the Application', async () => {
    const r = await submit('provision-database', { team_name: TEAM, component_name: 'web', tenant_uid: tenantUid, application: 'acme-web', storage: '2Gi' });
    expect(r.phase, r.message).toBe('Succeeded');
    const cluster = parse(fileAt(gitopsRepo, 'tenants/acme/web/database.yaml')!);
    expect(cluster).toMatchObject({ kind: 'Cluster', metadata: { name: 'acme-web-db' }, spec: { storage: { size: '2Gi' } } });
    const deployment = parse(fileAt(gitopsRepo, 'tenants/acme/web/deployment.yaml')!);
    expect(deployment.spec.template.spec.containers[0].env).toContainEqual({
      name: 'DATABASE_URL',
      valueFrom: { secretKeyRef: { name: 'acme-web-db-app', key: 'uri', optional: true } },
    });
    expect(deployment.spec.template.metadata.annotations['pds.dev/config-revision']).toBe(r.name);
    const app = (await getApplication('acme-web'))!;
    expect(app.metadata!.labels!['pds.dev/database']).toBe('postgres');
    expect(app.metadata!.annotations!['pds.dev/image-tag']).toBe('0.1.0'); // earlier annotations stay
    expect(argoCdSync('web')).toContain('cluster.postgresql.cnpg.io/acme-web-db created (server dry run)');
  });

  it('preview-deploy opens a preview with its expiry; preview-delete removes it', async () => {
    const preview = previewName('web', '0.2.0');
    const before = Date.now();
    const r = await submit('preview-deploy', {
      team_name: TEAM, component_name: 'web', image_tag: '0.2.0', ttl_hours: '2', tenant_uid: tenantUid,
      application: 'acme-web', preview_name: preview, preview_application: application(preview),
      host: host(preview), image: image('web', '0.2.0'),
    });
    expect(r.phase, r.message).toBe('Succeeded');
    const app = (await getApplication(application(preview)))!;
    expect(app.metadata!.labels).toMatchObject({ 'pds.dev/component-type': 'preview', 'pds.dev/preview-of': 'web', 'pds.dev/service': preview });
    expect(app.metadata!.annotations).toMatchObject({ 'pds.dev/port': '8787', 'pds.dev/image-tag': '0.2.0', 'pds.dev/host': host(preview) });
    const expiresAt = Date.parse(app.metadata!.annotations!['pds.dev/expires-at']!);
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 2 * 3600_000);
    expect(expiresAt).toBeLessThan(Date.now() + 2 * 3600_000 + 5_000);
    const deployment = parse(fileAt(gitopsRepo, `tenants/acme/${preview}/deployment.yaml`)!);
    expect(deployment.metadata.name).toBe(application(preview));
    expect(deployment.spec.template.spec.containers[0]).toMatchObject({ image: pinned(image('web', '0.2.0')), readinessProbe: { httpGet: { path: '/api/health' } } });
    expect(argoCdSync(preview)).toContain(`deployment.apps/${application(preview)} created (server dry run)`);

    const d = await submit('preview-delete', { team_name: TEAM, component_name: 'web', image_tag: '0.2.0', tenant_uid: tenantUid, preview_name: preview, preview_application: application(preview) });
    expect(d.phase, d.message).toBe('Succeeded');
    expect(filesUnder(gitopsRepo, `tenants/acme/${preview}`)).toEqual([]);
    expect(filesUnder(gitopsRepo, 'tenants/acme/web')).toHaveLength(4); // the service itself is untouched
    expect((await getApplication(application(preview)))!.metadata!.deletionTimestamp).toBeDefined();
    await finalizeApplication(application(preview));
    expect(await getApplication(application(preview))).toBeUndefined();
    expect(await getApplication('acme-web')).toBeDefined();

    const notAPreview = await submit('preview-delete', { team_name: TEAM, component_name: 'web', image_tag: '0.1.0', tenant_uid: tenantUid, preview_name: 'web', preview_application: 'acme-web' });
    expect(notAPreview.phase).toBe('Failed');
    expect((await getApplication('acme-web'))!.metadata!.deletionTimestamp).toBeUndefined();
  });

  it('retire-service removes the service, its previews and its environment Secret', async () => {
    const preview = previewName('web', '0.1.0');
    const p = await submit('preview-deploy', {
      team_name: TEAM, component_name: 'web', image_tag: '0.1.0', ttl_hours: '1', tenant_uid: tenantUid,
      application: 'acme-web', preview_name: preview, preview_application: application(preview),
      host: host(preview), image: image('web', '0.1.0'),
    });
    expect(p.phase, p.message).toBe('Succeeded');
    const r = await submit('retire-service', { team_name: TEAM, component_name: 'web', tenant_uid: tenantUid, application: 'acme-web' });
    expect(r.phase, r.message).toBe('Succeeded');
    expect(filesUnder(gitopsRepo, 'tenants/acme')).toEqual([]);
    for (const name of ['acme-web', application(preview)]) {
      expect((await getApplication(name))!.metadata!.deletionTimestamp, name).toBeDefined();
      await finalizeApplication(name);
    }
    expect(await getObject('v1', 'Secret', TEAM, 'acme-web-env')).toBeUndefined();
  });

  it('delete-tenant checks the tenant identity, then removes its repository directory, AppProject and namespace', async () => {
    const wrong = await submit('delete-tenant', { team_name: TEAM, tenant_uid: randomUUID() });
    expect(wrong.phase).toBe('Failed');
    expect((await admin.makeApiClient(CoreV1Api).readNamespace({ name: TEAM })).metadata!.deletionTimestamp).toBeUndefined();

    const r = await submit('delete-tenant', { team_name: TEAM, tenant_uid: tenantUid });
    expect(r.phase, r.message).toBe('Succeeded');
    expect(await getObject('argoproj.io/v1alpha1', 'AppProject', ARGOCD, TEAM)).toBeUndefined();
    // The namespace controller (kube-controller-manager) empties and removes the namespace.
    await until('namespace acme to be gone', async () => !(await getObject('v1', 'Namespace', undefined, TEAM)), 60);
  }, 120_000); // above its wait of up to 60 s

  it('ran every WorkflowTemplate', () => {
    expect([...ran].sort()).toEqual([
      'create-tenant', 'delete-tenant', 'deploy-service', 'preview-delete', 'preview-deploy', 'provision-database', 'retire-service', 'rollback-service',
    ]);
  });
});
