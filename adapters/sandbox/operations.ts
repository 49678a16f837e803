/**
 * What each operation does in the sandbox (SPEC "Endpoints → Operations", "Operation parameters"): a plan of named
 * steps, each of which checks and changes the sandbox state and writes the log lines a real run would (clone, build,
 * push, GitOps commit, Argo CD sync, rollout, health check).
 *
 * The engine (`engine.ts`) runs one step at a time, on a copy of the state, and commits the step's changes together
 * with the workflow's progress, so a step runs to completion exactly once even across a crash: it is re-run only when
 * its commit never reached the disk. A step that throws fails the workflow with the error's message.
 */
import { createHash } from 'node:crypto';
import { Conflict, InvalidParams, NotFound } from '../errors.js';
import type { Member, Quotas } from '../model.js';
import { serviceKey, type SandboxState, type ServiceRecord, type TenantRecord, type WorkflowRecord } from './state.js';

/** Settings the operations read. */
export interface OperationEnv {
  /** Service hosts are `<team>-<service>.<domain>`; the image registry is `registry.<domain>`. */
  domain: string;
  /** Milliseconds in one `ttl_hours` hour (3,600,000 outside tests). */
  hourMs: number;
}

/** What a step sees: the draft state it may change, its workflow, and sinks for log lines. */
export interface StepContext {
  /** The draft: changes are committed only if the step returns. */
  readonly state: SandboxState;
  readonly run: WorkflowRecord;
  readonly params: Readonly<Record<string, string>>;
  readonly now: Date;
  readonly env: OperationEnv;
  /** A workflow line (labels `source: workflow`, `workflow`, `step`) in the log of the plan's service. */
  log(line: string): void;
  /** A deployment event (labels `source: deployment`, `pod`) in the log of `team/app`. */
  event(team: string, app: string, pod: string, line: string): void;
}

export interface Step {
  name: string;
  run(ctx: StepContext): void;
}

/** The steps of one workflow and where its lines are logged. */
export interface Plan {
  team: string;
  /** The service whose log gets the workflow lines and which is marked `Degraded` on failure; "" for tenant operations. */
  app: string;
  steps: Step[];
  /** Message of the succeeded workflow; called on the draft right after the last step. */
  done(ctx: StepContext): string;
}

/** Operations the sandbox runs (SPEC "Registered operation names"). */
export const SANDBOX_OPERATIONS = [
  'create-tenant',
  'delete-tenant',
  'deploy-service',
  'provision-database',
  'retire-service',
  'rollback-service',
  'preview-deploy',
  'preview-delete',
] as const;

/** Quotas of a tenant created without `cpu`, `memory` or `pods`. */
export const DEFAULT_QUOTAS: Quotas = { cpu: '4', memory: '8Gi', pods: '20' };

/**
 * The plan of one submission. Never throws: problems with the parameters or the state surface when the first step
 * runs, so they fail the workflow (and its audit entry) with a message instead of refusing the submission. Step
 * names may use the state as it is now; what a step does depends only on the state it runs against.
 */
export function planOperation(
  submission: { operation: string; parameters: Record<string, string>; userId: string },
  state: Readonly<SandboxState>,
  env: OperationEnv,
): Plan {
  const p = submission.parameters;
  switch (submission.operation) {
    case 'create-tenant':
      return createTenant(p, submission.userId);
    case 'delete-tenant':
      return deleteTenant(p);
    case 'deploy-service':
      switch (p.action) {
        case 'onboard':
          return onboard(p, env);
        case 'deploy':
          return deploy(p, state, env);
        case 'update-config':
          return updateConfig(p, state, env);
        default:
          return failing(p, 'validate action', `unknown action "${p.action ?? ''}" for deploy-service; use onboard, deploy or update-config`);
      }
    case 'rollback-service':
      return rollback(p, state, env);
    case 'provision-database':
      return provisionDatabase(p);
    case 'retire-service':
      return retire(p);
    case 'preview-deploy':
      return previewDeploy(p, state, env);
    case 'preview-delete':
      return previewDelete(p);
    default:
      return failing(
        p,
        'resolve operation',
        `unknown operation "${submission.operation}"; the sandbox runs ${SANDBOX_OPERATIONS.join(', ')}`,
      );
  }
}

/** Name of the preview environment of `component` at `imageTag`: `<component>-preview-<x>-<y>-<z>`. */
export function previewName(component: string, imageTag: string): string {
  return `${component}-preview-${imageTag.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '')}`;
}

/** `<team>-<service>.<domain>` (SPEC "First-time onboarding sequence", step 5). */
export function serviceHost(team: string, app: string, domain: string): string {
  return `${team}-${app}.${domain}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Tenants

function createTenant(p: Record<string, string>, userId: string): Plan {
  const team = p.team_name ?? '';
  const quotas: Quotas = {
    cpu: p.cpu?.trim() || DEFAULT_QUOTAS.cpu,
    memory: p.memory?.trim() || DEFAULT_QUOTAS.memory,
    pods: p.pods?.trim() || DEFAULT_QUOTAS.pods,
  };
  const listed = [...new Set((p.admins ?? '').split(',').map((s) => s.trim()).filter(Boolean))];
  const admins = listed.length > 0 ? listed : [userId];
  return {
    team,
    app: '',
    steps: [
      {
        name: `validate tenant ${team}`,
        run(ctx) {
          required(ctx, 'team_name', 'create-tenant');
          if (ctx.state.tenants[team]) throw new Conflict(`tenant ${team} already exists`);
          ctx.log(`tenant ${team}: admins ${admins.join(', ')}; quotas cpu ${quotas.cpu}, memory ${quotas.memory}, pods ${quotas.pods}`);
        },
      },
      {
        name: `create namespace ${team}`,
        run(ctx) {
          if (ctx.state.tenants[team]) throw new Conflict(`tenant ${team} already exists`);
          const members: Member[] = admins.map((id) => ({ userId: id, role: 'admin' }));
          const tenant: TenantRecord = {
            name: team,
            displayName: p.display_name?.trim() || team,
            description: p.description?.trim() ?? '',
            contactEmail: p.contact_email?.trim() ?? '',
            quotas,
            members,
            createdAt: ctx.now.toISOString(),
          };
          ctx.state.tenants[team] = tenant;
          ctx.log(`namespace/${team} created (label pds.io/tenant=${team})`);
        },
      },
      {
        name: `apply ResourceQuota cpu=${quotas.cpu} memory=${quotas.memory} pods=${quotas.pods}`,
        run(ctx) {
          liveTenant(ctx.state, team);
          ctx.log(`resourcequota/${team}-quota configured in namespace ${team}`);
        },
      },
      {
        name: `bind roles (admin: ${admins.join(', ')})`,
        run(ctx) {
          liveTenant(ctx.state, team);
          for (const id of admins) ctx.log(`rolebinding/${team}-admin bound to ${id}`);
        },
      },
      {
        name: `register tenant ${team} in the GitOps repository`,
        run(ctx) {
          liveTenant(ctx.state, team);
          ctx.log(`commit ${sha(ctx.run.name, 'tenant').slice(0, 7)} "add tenant ${team}"`);
        },
      },
    ],
    done: () => `tenant ${team} created`,
  };
}

function deleteTenant(p: Record<string, string>): Plan {
  const team = p.team_name ?? '';
  return {
    team,
    app: '',
    steps: [
      {
        name: `validate tenant ${team}`,
        run(ctx) {
          required(ctx, 'team_name', 'delete-tenant');
          liveTenant(ctx.state, team);
          const names = servicesOf(ctx.state, team).map((s) => s.name);
          ctx.log(names.length ? `services to remove: ${names.join(', ')}` : 'tenant has no services');
        },
      },
      {
        name: `delete Argo CD Applications of ${team}`,
        run(ctx) {
          liveTenant(ctx.state, team);
          for (const s of servicesOf(ctx.state, team)) {
            delete ctx.state.services[serviceKey(team, s.name)];
            ctx.log(`application ${team}-${s.name} deleted`);
          }
        },
      },
      {
        name: `delete namespace ${team}`,
        run(ctx) {
          liveTenant(ctx.state, team);
          delete ctx.state.tenants[team];
          delete ctx.state.repositories[team];
          ctx.log(`namespace/${team} deleted`);
        },
      },
    ],
    done: () => `tenant ${team} deleted`,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Services

function onboard(p: Record<string, string>, env: OperationEnv): Plan {
  const team = p.team_name ?? '';
  const app = p.component_name ?? '';
  const tag = p.git_tag ?? '';
  const repo = p.dockerfile_repo ?? '';
  const dockerfilePath = p.dockerfile_path?.trim() || 'Dockerfile';
  const template = p.service_template?.trim() || 'default';
  const healthPath = normalizePath(p.health_check_path) ?? '/healthz';
  const port = p.port ?? '';
  const image = imageRef(env, team, app, tag);
  return {
    team,
    app,
    steps: [
      {
        name: `validate onboarding of ${team}/${app}`,
        run(ctx) {
          const what = 'deploy-service action=onboard';
          for (const name of ['team_name', 'component_name', 'git_tag', 'dockerfile_repo', 'port']) required(ctx, name, what);
          liveTenant(ctx.state, team);
          if (ctx.state.services[serviceKey(team, app)]) {
            throw new Conflict(`service ${team}/${app} is already onboarded; use action=deploy`);
          }
          const service: ServiceRecord = {
            team,
            name: app,
            imageTag: '',
            host: serviceHost(team, app, env.domain),
            port,
            componentType: 'base-service',
            hasDatabase: false,
            syncStatus: 'OutOfSync',
            healthStatus: 'Progressing',
            message: '',
            deployedTags: [],
            env: {},
            healthCheckPath: healthPath,
            dockerfileRepo: repo,
            dockerfilePath,
            serviceTemplate: template,
            createdAt: ctx.now.toISOString(),
          };
          ctx.state.services[serviceKey(team, app)] = service;
          startRollout(service, ctx.run, `onboarding ${tag}`);
          ctx.log(`service ${team}/${app} registered: host ${service.host}, port ${port}, template ${template}`);
        },
      },
      ...buildSteps(team, app, repo, tag, dockerfilePath, image),
      {
        name: `render manifests (template ${template}, port ${port}, probes GET ${healthPath})`,
        run(ctx) {
          liveService(ctx.state, team, app);
          ctx.log(`rendered Deployment, Service and Ingress ${serviceHost(team, app, env.domain)} for ${team}/${app}`);
        },
      },
      ...rolloutSteps(env, team, app, () => tag, healthPath, (_ctx, service) => recordDeployed(service, tag)),
    ],
    done: () => `onboarded ${team}/${app} and deployed ${tag} at https://${serviceHost(team, app, env.domain)}`,
  };
}

function deploy(p: Record<string, string>, state: Readonly<SandboxState>, env: OperationEnv): Plan {
  const team = p.team_name ?? '';
  const app = p.component_name ?? '';
  const tag = p.git_tag ?? '';
  const known = state.services[serviceKey(team, app)];
  const repo = p.dockerfile_repo?.trim() || known?.dockerfileRepo || `${team}/${app}`;
  const image = imageRef(env, team, app, tag);
  return {
    team,
    app,
    steps: [
      {
        name: `validate deploy of ${team}/${app}@${tag}`,
        run(ctx) {
          for (const name of ['team_name', 'component_name', 'git_tag']) required(ctx, name, 'deploy-service action=deploy');
          liveTenant(ctx.state, team);
          const service = ctx.state.services[serviceKey(team, app)];
          if (!service) throw new NotFound(`service ${team}/${app} is not onboarded; run deploy-service with action=onboard first`);
          notPreview(service, 'deploy-service');
          service.dockerfileRepo = repo;
          startRollout(service, ctx.run, `deploying ${tag}`);
          ctx.log(`deploying ${tag} to ${team}/${app} (currently ${service.imageTag || 'nothing deployed'})`);
        },
      },
      ...buildSteps(team, app, repo, tag, known?.dockerfilePath ?? 'Dockerfile', image),
      ...rolloutSteps(env, team, app, () => tag, known?.healthCheckPath ?? '/healthz', (_ctx, service) =>
        recordDeployed(service, tag),
      ),
    ],
    done: () => `deployed ${team}/${app} ${tag}`,
  };
}

function updateConfig(p: Record<string, string>, state: Readonly<SandboxState>, env: OperationEnv): Plan {
  const team = p.team_name ?? '';
  const app = p.component_name ?? '';
  const known = state.services[serviceKey(team, app)];
  return {
    team,
    app,
    steps: [
      {
        name: `validate config of ${team}/${app}`,
        run(ctx) {
          for (const name of ['team_name', 'component_name']) required(ctx, name, 'deploy-service action=update-config');
          if (ctx.params.env_vars === undefined) throw new InvalidParams('parameter env_vars is required for deploy-service action=update-config');
          const parsed = parseEnv(ctx.params.env_vars);
          liveTenant(ctx.state, team);
          const service = ctx.state.services[serviceKey(team, app)];
          if (!service) throw new NotFound(`service ${team}/${app} is not onboarded; run deploy-service with action=onboard first`);
          notPreview(service, 'deploy-service');
          if (!service.imageTag) {
            throw new Conflict(`service ${team}/${app} has no running image yet; deploy it (action=deploy) before updating its config`);
          }
          startRollout(service, ctx.run, `rolling out new config (${Object.keys(parsed).length} variables)`);
          ctx.log(`variables: ${Object.keys(parsed).join(', ') || '(none)'}`);
        },
      },
      {
        name: `render Secret ${team}-${app}-env`,
        run(ctx) {
          const parsed = parseEnv(ctx.params.env_vars ?? '');
          liveService(ctx.state, team, app);
          ctx.log(`secret/${team}-${app}-env: ${Object.keys(parsed).length} keys (values not logged)`);
        },
      },
      ...rolloutSteps(
        env,
        team,
        app,
        (ctx) => liveService(ctx.state, team, app).imageTag,
        known?.healthCheckPath ?? '/healthz',
        (ctx, service) => {
          service.env = parseEnv(ctx.params.env_vars ?? '');
          return `config updated (${Object.keys(service.env).length} variables), running ${service.imageTag}`;
        },
      ),
    ],
    done: (ctx) => `config of ${team}/${app} updated (${Object.keys(parseEnv(ctx.params.env_vars ?? '')).length} variables)`,
  };
}

function rollback(p: Record<string, string>, state: Readonly<SandboxState>, env: OperationEnv): Plan {
  const team = p.team_name ?? '';
  const app = p.component_name ?? '';
  const tag = p.target_tag ?? '';
  const known = state.services[serviceKey(team, app)];
  return {
    team,
    app,
    steps: [
      {
        name: `validate rollback of ${team}/${app} to ${tag}`,
        run(ctx) {
          for (const name of ['team_name', 'component_name', 'target_tag']) required(ctx, name, 'rollback-service');
          liveTenant(ctx.state, team);
          const service = liveService(ctx.state, team, app);
          notPreview(service, 'rollback-service');
          if (!service.deployedTags.includes(tag)) {
            throw new Conflict(
              service.deployedTags.length
                ? `tag ${tag} was never deployed for ${team}/${app}; deployed tags: ${service.deployedTags.join(', ')}`
                : `tag ${tag} was never deployed for ${team}/${app}; no tag has been deployed yet`,
            );
          }
          startRollout(service, ctx.run, `rolling back to ${tag}`);
          ctx.log(`rolling back ${team}/${app} from ${service.imageTag || 'nothing'} to ${tag}; image ${imageRef(env, team, app, tag)} is in the registry`);
        },
      },
      ...rolloutSteps(env, team, app, () => tag, known?.healthCheckPath ?? '/healthz', (_ctx, service) =>
        recordDeployed(service, tag),
      ),
    ],
    done: () => `rolled back ${team}/${app} to ${tag}`,
  };
}

function provisionDatabase(p: Record<string, string>): Plan {
  const team = p.team_name ?? '';
  const app = p.component_name ?? '';
  const engine = p.engine?.trim() || 'postgres';
  const storage = p.storage?.trim() || '1Gi';
  const db = `${team}-${app}-db`;
  return {
    team,
    app,
    steps: [
      {
        name: `validate database for ${team}/${app}`,
        run(ctx) {
          for (const name of ['team_name', 'component_name']) required(ctx, name, 'provision-database');
          liveTenant(ctx.state, team);
          const service = liveService(ctx.state, team, app);
          notPreview(service, 'provision-database');
          if (service.database && service.database.engine !== engine) {
            throw new Conflict(`service ${team}/${app} already has a ${service.database.engine} database; a service has one database`);
          }
          ctx.log(service.database ? `database ${db} exists; resizing to ${storage}` : `provisioning ${engine} database ${db} (${storage})`);
        },
      },
      {
        name: `create ${engine} database ${db} (${storage})`,
        run(ctx) {
          liveService(ctx.state, team, app);
          ctx.log(`statefulset/${db} ready, persistentvolumeclaim/${db}-data bound (${storage})`);
        },
      },
      {
        name: `create Secret ${db}-credentials`,
        run(ctx) {
          liveService(ctx.state, team, app);
          ctx.log(`secret/${db}-credentials created (user, password, DATABASE_URL)`);
        },
      },
      {
        name: `attach DATABASE_URL to ${team}/${app}`,
        run(ctx) {
          const service = liveService(ctx.state, team, app);
          service.hasDatabase = true;
          service.database = { engine, storage };
          ctx.log(`DATABASE_URL of ${team}/${app} now refers to secret/${db}-credentials`);
        },
      },
    ],
    done: () => `${engine} database ${db} (${storage}) provisioned for ${team}/${app}`,
  };
}

function retire(p: Record<string, string>): Plan {
  const team = p.team_name ?? '';
  const app = p.component_name ?? '';
  return {
    team,
    app,
    steps: [
      {
        name: `validate retirement of ${team}/${app}`,
        run(ctx) {
          for (const name of ['team_name', 'component_name']) required(ctx, name, 'retire-service');
          liveTenant(ctx.state, team);
          const service = liveService(ctx.state, team, app);
          if (service.preview) throw new Conflict(`${team}/${app} is a preview environment; remove it with preview-delete`);
          const previews = previewsOf(ctx.state, team, app).map((s) => s.name);
          ctx.log(`retiring ${team}/${app}${previews.length ? ` and its previews ${previews.join(', ')}` : ''}`);
        },
      },
      {
        name: `delete Argo CD Application ${team}-${app}`,
        run(ctx) {
          liveService(ctx.state, team, app);
          for (const preview of previewsOf(ctx.state, team, app)) delete ctx.state.services[serviceKey(team, preview.name)];
          delete ctx.state.services[serviceKey(team, app)];
          ctx.log(`application ${team}-${app} deleted; Deployment, Service and Ingress pruned`);
        },
      },
      {
        name: `remove ${team}/${app} from the GitOps repository`,
        run(ctx) {
          ctx.log(`commit ${sha(ctx.run.name, 'retire').slice(0, 7)} "retire ${team}/${app}"`);
        },
      },
    ],
    done: () => `retired ${team}/${app}`,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Previews

function previewDeploy(p: Record<string, string>, state: Readonly<SandboxState>, env: OperationEnv): Plan {
  const team = p.team_name ?? '';
  const base = p.component_name ?? '';
  const tag = p.image_tag ?? '';
  const name = previewName(base, tag);
  const known = state.services[serviceKey(team, base)];
  const healthPath = known?.healthCheckPath ?? '/healthz';
  return {
    team,
    app: name,
    steps: [
      {
        name: `validate preview ${team}/${name}`,
        run(ctx) {
          for (const key of ['team_name', 'component_name', 'image_tag', 'ttl_hours']) required(ctx, key, 'preview-deploy');
          const ttlHours = Number(ctx.params.ttl_hours);
          if (!Number.isFinite(ttlHours) || ttlHours <= 0) {
            throw new InvalidParams(`ttl_hours must be a positive number of hours, e.g. "24"; got "${ctx.params.ttl_hours}"`);
          }
          liveTenant(ctx.state, team);
          const baseService = ctx.state.services[serviceKey(team, base)];
          if (!baseService || baseService.preview) {
            throw new NotFound(`service ${team}/${base} is not onboarded; a preview needs its base service`);
          }
          const expiresAt = new Date(ctx.now.getTime() + ttlHours * ctx.env.hourMs).toISOString();
          const existing = ctx.state.services[serviceKey(team, name)];
          if (existing && !existing.preview) throw new Conflict(`${team}/${name} is a service, not a preview; choose another image_tag`);
          const preview: ServiceRecord = {
            ...(existing ?? {
              team,
              name,
              imageTag: '',
              host: serviceHost(team, name, env.domain),
              port: baseService.port,
              componentType: 'preview',
              hasDatabase: false,
              syncStatus: 'OutOfSync' as const,
              healthStatus: 'Progressing' as const,
              message: '',
              deployedTags: [],
              env: { ...baseService.env },
              healthCheckPath: baseService.healthCheckPath,
              dockerfileRepo: baseService.dockerfileRepo,
              dockerfilePath: baseService.dockerfilePath,
              serviceTemplate: baseService.serviceTemplate,
              createdAt: ctx.now.toISOString(),
            }),
            preview: { base, imageTag: tag, ttlHours: ctx.params.ttl_hours ?? '', expiresAt },
          };
          ctx.state.services[serviceKey(team, name)] = preview;
          startRollout(preview, ctx.run, `deploying preview ${tag}`);
          ctx.log(`preview ${team}/${name} of ${base}@${tag} at https://${preview.host}, expires ${expiresAt}`);
        },
      },
      {
        name: `create Argo CD Application ${team}-${name}`,
        run(ctx) {
          liveService(ctx.state, team, name);
          ctx.log(`application ${team}-${name} created from ${team}-${base} with image tag ${tag}`);
        },
      },
      ...rolloutSteps(env, team, name, () => tag, healthPath, (_ctx, service) => recordDeployed(service, tag)),
    ],
    done: (ctx) => {
      const preview = ctx.state.services[serviceKey(team, name)];
      return `preview ${team}/${name} running ${tag} at https://${serviceHost(team, name, env.domain)} until ${preview?.preview?.expiresAt ?? '?'}`;
    },
  };
}

function previewDelete(p: Record<string, string>): Plan {
  const team = p.team_name ?? '';
  const base = p.component_name ?? '';
  const tag = p.image_tag ?? '';
  const name = previewName(base, tag);
  return {
    team,
    app: name,
    steps: [
      {
        name: `validate removal of preview ${team}/${name}`,
        run(ctx) {
          for (const key of ['team_name', 'component_name', 'image_tag']) required(ctx, key, 'preview-delete');
          liveTenant(ctx.state, team);
          const preview = ctx.state.services[serviceKey(team, name)];
          if (!preview?.preview) {
            const existing = previewsOf(ctx.state, team, base).map((s) => s.preview?.imageTag);
            throw new NotFound(
              `no preview of ${team}/${base} at ${tag}` + (existing.length ? `; previews exist for ${existing.join(', ')}` : '; it has no previews'),
            );
          }
          ctx.log(`removing preview ${team}/${name} (expires ${preview.preview.expiresAt})`);
        },
      },
      {
        name: `delete Argo CD Application ${team}-${name}`,
        run(ctx) {
          delete ctx.state.services[serviceKey(team, name)];
          ctx.log(`application ${team}-${name} deleted; Deployment, Service and Ingress pruned`);
        },
      },
    ],
    done: () => `preview ${team}/${name} deleted`,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Shared steps

function buildSteps(team: string, app: string, repo: string, tag: string, dockerfilePath: string, image: string): Step[] {
  return [
    {
      name: `clone ${repo}@${tag}`,
      run(ctx) {
        liveService(ctx.state, team, app);
        ctx.log(`checked out ${repo} at tag ${tag} (commit ${sha(repo, tag).slice(0, 12)})`);
      },
    },
    {
      name: `build image ${image}`,
      run(ctx) {
        liveService(ctx.state, team, app);
        ctx.log(`building from ${dockerfilePath}`);
        ctx.log(`built ${image} (sha256:${sha('image', image).slice(0, 12)})`);
      },
    },
    {
      name: `push image ${image}`,
      run(ctx) {
        liveService(ctx.state, team, app);
        ctx.log(`pushed ${image} digest sha256:${sha('image', image)}`);
      },
    },
  ];
}

/**
 * GitOps commit, Argo CD sync, rollout and health check; the last step calls `finish`, which applies the outcome to the
 * service and returns its status message, and then marks the service Synced/Healthy.
 */
function rolloutSteps(
  env: OperationEnv,
  team: string,
  app: string,
  tagOf: (ctx: StepContext) => string,
  healthPath: string,
  finish: (ctx: StepContext, service: ServiceRecord) => string,
): Step[] {
  const application = `${team}-${app}`;
  return [
    {
      name: `update GitOps manifest of ${application}`,
      run(ctx) {
        liveService(ctx.state, team, app);
        const tag = tagOf(ctx);
        ctx.log(`set image ${imageRef(env, team, app, tag)} in apps/${team}/${app}/values.yaml`);
        ctx.log(`commit ${sha(ctx.run.name, 'gitops').slice(0, 7)} "${ctx.run.operation} ${team}/${app} ${tag}"`);
      },
    },
    {
      name: `Argo CD sync ${application}`,
      run(ctx) {
        const service = liveService(ctx.state, team, app);
        ctx.log(`application ${application} syncing to revision ${sha(ctx.run.name, 'gitops').slice(0, 7)}`);
        ctx.log(`applied Deployment ${application}, Service ${application}, Ingress ${service.host}`);
      },
    },
    {
      name: 'wait for rollout',
      run(ctx) {
        const service = liveService(ctx.state, team, app);
        const tag = tagOf(ctx);
        const pod = podName(team, app, ctx.run.name);
        ctx.event(team, app, pod, `pulled image ${imageRef(env, team, app, tag)}`);
        ctx.event(team, app, pod, `container started on port ${service.port}`);
        ctx.log(`deployment ${application}: 1/1 replicas updated`);
      },
    },
    {
      name: `health check GET ${healthPath} → 200`,
      run(ctx) {
        const service = liveService(ctx.state, team, app);
        const pod = podName(team, app, ctx.run.name);
        ctx.event(team, app, pod, `readiness probe GET ${service.healthCheckPath} → 200`);
        ctx.log(`GET https://${service.host}${service.healthCheckPath} → 200`);
        const message = finish(ctx, service);
        if (service.activeWorkflow === undefined || service.activeWorkflow === ctx.run.name) {
          service.syncStatus = 'Synced';
          service.healthStatus = 'Healthy';
          service.message = message;
          delete service.activeWorkflow;
        }
      },
    },
  ];
}

/** Mark the service as being rolled out by `run` (SPEC "Sync and health": OutOfSync/Progressing while it runs). */
function startRollout(service: ServiceRecord, run: WorkflowRecord, message: string): void {
  service.syncStatus = 'OutOfSync';
  service.healthStatus = 'Progressing';
  service.message = message;
  service.activeWorkflow = run.name;
}

/** A successful rollout of `tag`: the service now runs it, and may later roll back to it. */
function recordDeployed(service: ServiceRecord, tag: string): string {
  service.imageTag = tag;
  if (!service.deployedTags.includes(tag)) service.deployedTags.push(tag);
  return `deployed ${tag}`;
}

/** A plan whose only step fails with `message` (unknown operation or action). */
function failing(p: Record<string, string>, step: string, message: string): Plan {
  return {
    team: p.team_name ?? '',
    app: p.component_name ?? '',
    steps: [
      {
        name: step,
        run() {
          throw new InvalidParams(message);
        },
      },
    ],
    done: () => '',
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers

function required(ctx: StepContext, name: string, what: string): string {
  const value = ctx.params[name]?.trim();
  if (!value) throw new InvalidParams(`parameter ${name} is required for ${what}`);
  return value;
}

function liveTenant(state: SandboxState, team: string): TenantRecord {
  const tenant = state.tenants[team];
  if (!tenant) throw new NotFound(`tenant ${team} does not exist; run create-tenant first`);
  return tenant;
}

/** The service, or NotFound (it never existed, or was retired while this workflow ran). */
function liveService(state: SandboxState, team: string, app: string): ServiceRecord {
  const service = state.services[serviceKey(team, app)];
  if (!service) throw new NotFound(`service ${team}/${app} does not exist (never onboarded, retired or expired)`);
  return service;
}

function notPreview(service: ServiceRecord, operation: string): void {
  if (service.preview) {
    throw new Conflict(`${service.team}/${service.name} is a preview environment; ${operation} applies to base services`);
  }
}

function servicesOf(state: SandboxState, team: string): ServiceRecord[] {
  return Object.values(state.services).filter((s) => s.team === team);
}

function previewsOf(state: SandboxState, team: string, base: string): ServiceRecord[] {
  return servicesOf(state, team).filter((s) => s.preview?.base === base);
}

function normalizePath(path: string | undefined): string | undefined {
  const trimmed = path?.trim();
  if (!trimmed) return undefined;
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

/**
 * Parse `env_vars`: `KEY=VALUE` per line; blank lines and `#` comments are skipped. Values are never echoed in errors.
 * @throws InvalidParams naming the line number of a line that is not `KEY=VALUE`.
 */
export function parseEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const eq = line.indexOf('=');
    const name = eq > 0 ? line.slice(0, eq).trim() : '';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new InvalidParams(`env_vars line ${index + 1} is not KEY=VALUE (KEY: letters, digits and "_", not starting with a digit)`);
    }
    env[name] = line.slice(eq + 1);
  });
  return env;
}

function imageRef(env: OperationEnv, team: string, app: string, tag: string): string {
  return `registry.${env.domain}/${team}/${app}:${tag}`;
}

function sha(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex');
}

/** Kubernetes-style pod name `<team>-<app>-<replicaset hash>-<pod suffix>`, stable for one workflow. */
function podName(team: string, app: string, workflow: string): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  const bytes = createHash('sha256').update(`${team}/${app}/${workflow}`).digest();
  const chars = [...bytes.subarray(0, 15)].map((b) => alphabet[b % alphabet.length]).join('');
  return `${team}-${app}-${chars.slice(0, 10)}-${chars.slice(10, 15)}`;
}
