/**
 * Plans of `deploy-service` (actions `onboard`, `deploy`, `update-config`), `rollback-service`, `provision-database`
 * and `retire-service` (see `plan.ts`). Parameters arrive validated and typed; steps check only the sandbox's state.
 */
import { Conflict, NotFound } from '../../core/errors.js';
import { applicationName, serviceHost } from '../../core/names.js';
import type { OperationParams } from '../../core/operations/index.js';
import type { DeployServiceParams, PinnedImage } from '../../core/operations/service-operations.js';
import { DEFAULT_BUILD_FILE, sourceImage } from '../../core/images.js';
import type { OperationEnv, Plan, PlanContext } from './plan.js';
import { isProgressive, progressiveSteps, settingsOf } from './rollout-steps.js';
import { serviceKey, type SandboxState, type ServiceRecord } from './state.js';
import {
  buildSteps,
  runningImage,
  sandboxRegistry,
  liveService,
  liveTenant,
  notPreview,
  previewsOf,
  recordDeployed,
  requireFreeName,
  rolloutSteps,
  sha,
  startRollout,
} from './steps.js';

type Action<A extends DeployServiceParams['action']> = Extract<DeployServiceParams, { action: A }>;

/** `deploy-service` `action=onboard`: register the service (imageTag "" until the rollout succeeds), build and deploy `git_tag`. */
export function onboard(p: Action<'onboard'>, env: OperationEnv): Plan {
  const { team_name: team, component_name: app, git_tag: tag, dockerfile_repo: repo, port } = p;
  const dockerfilePath = p.dockerfile_path ?? 'Dockerfile';
  const template = p.service_template ?? 'default';
  const healthPath = p.health_check_path ?? '/healthz';
  const image = sourceImage(sandboxRegistry(env), { repo, tag, dockerfilePath });
  return {
    team,
    app,
    steps: [
      {
        name: `validate onboarding of ${team}/${app}`,
        run(ctx) {
          liveTenant(ctx.state, team);
          if (ctx.state.services[serviceKey(team, app)]) {
            throw new Conflict(`service ${team}/${app} is already onboarded; use action=deploy`);
          }
          requireFreeName(ctx.state, team, app);
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
            // The first release has no stable one to compare with: it goes out whole, whatever the strategy.
            ...(p.strategy && p.strategy !== 'rolling' ? { strategy: p.strategy } : {}),
            ...(p.canary_steps ? { canarySteps: p.canary_steps } : {}),
          };
          ctx.state.services[serviceKey(team, app)] = service;
          startRollout(service, ctx.run, `onboarding ${tag}`);
          ctx.log(`service ${team}/${app} registered: host ${service.host}, port ${port}, template ${template}, strategy ${p.strategy ?? 'rolling'}`);
        },
      },
      ...buildSteps(team, app, { repo, tag, dockerfilePath }, image, (p as PinnedImage).image_digest),
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

/**
 * `deploy-service` `action=deploy`: build and deploy `git_tag` to an onboarded service, progressively (canary or
 * blue-green) when its strategy says so and it already runs a tag. The strategy is the one the service had at
 * submission (`pinned`), so a strategy change queued meanwhile applies from the next deploy.
 */
export function deploy(p: Action<'deploy'>, { state, env, pinned }: Pick<PlanContext, 'state' | 'env' | 'pinned'>): Plan {
  const { team_name: team, component_name: app, git_tag: tag, dockerfile_repo: repo } = p;
  const known = state.services[serviceKey(team, app)];
  const dockerfilePath = p.dockerfile_path ?? known?.dockerfilePath ?? DEFAULT_BUILD_FILE;
  const image = sourceImage(sandboxRegistry(env), { repo, tag, dockerfilePath });
  const settings = pinned ?? (isProgressive(settingsOf(known), known) ? settingsOf(known) : { strategy: 'rolling' as const });
  const healthPath = known?.healthCheckPath ?? '/healthz';
  const progressive = settings.strategy === 'rolling' ? undefined : progressiveSteps(env, { team, app, tag, healthPath }, settings);
  return {
    team,
    app,
    pin: settings,
    steps: [
      {
        name: `validate deploy of ${team}/${app}@${tag}`,
        run(ctx) {
          liveTenant(ctx.state, team);
          const service = ctx.state.services[serviceKey(team, app)];
          if (!service) throw new NotFound(`service ${team}/${app} is not onboarded; run deploy-service with action=onboard first`);
          notPreview(service, 'deploy-service');
          // The service now runs what this source builds: later reads of its image (rollout, observations) name it.
          service.dockerfileRepo = repo;
          service.dockerfilePath = dockerfilePath;
          startRollout(service, ctx.run, `deploying ${tag}`);
          ctx.log(`deploying ${tag} to ${team}/${app} (currently ${service.imageTag || 'nothing deployed'})`);
        },
      },
      ...buildSteps(team, app, { repo, tag, dockerfilePath }, image, (p as PinnedImage).image_digest),
      ...rolloutSteps(env, team, app, () => tag, healthPath, (_ctx, service) => recordDeployed(service, tag), progressive),
    ],
    done: () => `deployed ${team}/${app} ${tag}${progressive ? ` (${settings.strategy})` : ''}`,
  };
}

/**
 * `deploy-service` `action=update-config`: replace the service's environment with `env_vars` and roll it, and/or set
 * its rollout strategy (which applies from its next deploy; a strategy change alone rolls no pods).
 */
export function updateConfig(p: Action<'update-config'>, state: Readonly<SandboxState>, env: OperationEnv): Plan {
  const { team_name: team, component_name: app } = p;
  const vars = p.env_vars && Object.fromEntries(p.env_vars.map((v) => [v.key, v.value]));
  const count = p.env_vars?.length ?? 0;
  const known = state.services[serviceKey(team, app)];
  const strategy = p.strategy;
  const setStrategy = (service: ServiceRecord) => {
    if (!strategy) return '';
    if (strategy === 'rolling') delete service.strategy;
    else service.strategy = strategy;
    if (p.canary_steps) service.canarySteps = p.canary_steps;
    else if (strategy !== 'canary') delete service.canarySteps;
    return `strategy ${strategy}${strategy === 'canary' ? ` (${service.canarySteps ?? 'default steps'})` : ''}`;
  };
  const validate = {
    name: `validate config of ${team}/${app}`,
    run(ctx: Parameters<Plan['steps'][number]['run']>[0]) {
      liveTenant(ctx.state, team);
      const service = ctx.state.services[serviceKey(team, app)];
      if (!service) throw new NotFound(`service ${team}/${app} is not onboarded; run deploy-service with action=onboard first`);
      notPreview(service, 'deploy-service');
      if (vars && !service.imageTag) {
        throw new Conflict(`service ${team}/${app} has no running image yet; deploy it (action=deploy) before updating its config`);
      }
      if (vars) startRollout(service, ctx.run, `rolling out new config (${count} variables)`);
      if (p.env_vars) ctx.log(`variables: ${p.env_vars.map((v) => v.key).join(', ')}`);
    },
  };
  if (!vars) {
    return {
      team,
      app,
      steps: [
        validate,
        {
          name: `set rollout strategy of ${team}/${app} to ${strategy}`,
          run(ctx) {
            const what = setStrategy(liveService(ctx.state, team, app));
            ctx.log(`Rollout ${applicationName(team, app)}: ${what}; applies from the next deploy`);
          },
        },
      ],
      done: () => `rollout strategy of ${team}/${app} set to ${strategy}`,
    };
  }
  return {
    team,
    app,
    steps: [
      validate,
      {
        name: `render Secret ${applicationName(team, app)}-env`,
        run(ctx) {
          liveService(ctx.state, team, app);
          ctx.log(`secret/${applicationName(team, app)}-env: ${count} keys (values not logged)`);
        },
      },
      ...rolloutSteps(
        env,
        team,
        app,
        (ctx) => liveService(ctx.state, team, app).imageTag,
        known?.healthCheckPath ?? '/healthz',
        (_ctx, service) => {
          service.env = { ...vars };
          const what = setStrategy(service);
          return `config updated (${count} variables)${what ? `, ${what}` : ''}, running ${service.imageTag}`;
        },
      ),
    ],
    done: () => `config of ${team}/${app} updated (${count} variables)${strategy ? `, strategy ${strategy}` : ''}`,
  };
}

/**
 * `rollback-service`: redeploy `target_tag`. Whether the tag ran on the service before is decided once, at the door,
 * from the audit trail (`requireDeployedTag` in `core/operations/preflight.ts`); the sandbox trusts the door.
 */
export function rollback(p: OperationParams<'rollback-service'>, state: Readonly<SandboxState>, env: OperationEnv): Plan {
  const { team_name: team, component_name: app, target_tag: tag } = p;
  const known = state.services[serviceKey(team, app)];
  return {
    team,
    app,
    steps: [
      {
        name: `validate rollback of ${team}/${app} to ${tag}`,
        run(ctx) {
          liveTenant(ctx.state, team);
          const service = liveService(ctx.state, team, app);
          notPreview(service, 'rollback-service');
          startRollout(service, ctx.run, `rolling back to ${tag}`);
          ctx.log(`rolling back ${team}/${app} from ${service.imageTag || 'nothing'} to ${tag}; image ${runningImage(env, service, tag).reference} is in the registry`);
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
export function provisionDatabase(p: OperationParams<'provision-database'>): Plan {
  const { team_name: team, component_name: app } = p;
  const engine = p.engine ?? 'postgres';
  const storage = p.storage ?? '1Gi';
  const db = `${team}-${app}-db`;
  return {
    team,
    app,
    steps: [
      {
        name: `validate database for ${team}/${app}`,
        run(ctx) {
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
export function retire(p: OperationParams<'retire-service'>): Plan {
  const { team_name: team, component_name: app } = p;
  return {
    team,
    app,
    steps: [
      {
        name: `validate retirement of ${team}/${app}`,
        run(ctx) {
          liveTenant(ctx.state, team);
          const service = liveService(ctx.state, team, app);
          if (service.preview) throw new Conflict(`${team}/${app} is a preview environment; remove it with preview-delete`);
          const previews = previewsOf(ctx.state, team, app).map((s) => s.name);
          ctx.log(`retiring ${team}/${app}${previews.length ? ` and its previews ${previews.join(', ')}` : ''}`);
        },
      },
      {
        name: `delete Argo CD Application ${applicationName(team, app)}`,
        run(ctx) {
          liveService(ctx.state, team, app);
          for (const preview of previewsOf(ctx.state, team, app)) delete ctx.state.services[serviceKey(team, preview.name)];
          delete ctx.state.services[serviceKey(team, app)];
          ctx.log(`application ${applicationName(team, app)} deleted; Deployment, Service and Ingress pruned`);
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
