/**
 * Plans of `deploy-service` (actions `onboard`, `deploy`, `update-config`), `rollback-service`, `provision-database`
 * and `retire-service` (see `plan.ts`).
 */
import { Conflict, InvalidParams, NotFound } from '../../core/errors.js';
import type { OperationEnv, Plan } from './plan.js';
import { serviceKey, type SandboxState, type ServiceRecord } from './state.js';
import {
  buildSteps,
  imageRef,
  liveService,
  liveTenant,
  normalizePath,
  notPreview,
  parseEnv,
  previewsOf,
  recordDeployed,
  required,
  rolloutSteps,
  serviceHost,
  sha,
  startRollout,
} from './steps.js';

/** `deploy-service` `action=onboard`: register the service (imageTag "" until the rollout succeeds), build and deploy `git_tag`. */
export function onboard(p: Record<string, string>, env: OperationEnv): Plan {
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

/** `deploy-service` `action=deploy`: build and deploy `git_tag` to an onboarded service. */
export function deploy(p: Record<string, string>, state: Readonly<SandboxState>, env: OperationEnv): Plan {
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

/** `deploy-service` `action=update-config`: replace the service's environment with `env_vars` and roll it. */
export function updateConfig(p: Record<string, string>, state: Readonly<SandboxState>, env: OperationEnv): Plan {
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

/** `rollback-service`: redeploy `target_tag`, which must have been deployed to the service before. */
export function rollback(p: Record<string, string>, state: Readonly<SandboxState>, env: OperationEnv): Plan {
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

/** `provision-database`: a database (`engine`, default postgres; `storage`, default 1Gi) for the service. */
export function provisionDatabase(p: Record<string, string>): Plan {
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

/** `retire-service`: remove the service, its Application and its previews. */
export function retire(p: Record<string, string>): Plan {
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
