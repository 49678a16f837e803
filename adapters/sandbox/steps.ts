/**
 * Steps and checks shared by the operation plans: build (clone, build, push) and rollout (GitOps commit, Argo CD sync,
 * rollout, health check) steps, the lookups that fail a step with a clear message, and names (hosts, images, pods).
 */
import { createHash } from 'node:crypto';
import { NotFound, Conflict } from '../../core/errors.js';
import { applicationName } from '../../core/names.js';
import { pinnedImage, simulatedDigest, sourceImage } from '../../core/images.js';
import type { RunningImage } from '../../core/ports.js';
import type { OperationEnv, Step, StepContext } from './plan.js';
import { own, serviceKey, type SandboxState, type ServiceRecord, type TenantRecord, type WorkflowRecord } from './state.js';

/**
 * The build of `image` (`<repository>:<tag>` of its source, `core/images.ts`): `clone <repo>@<tag>`, `build image
 * <image>` (from `dockerfilePath`), `push image <image>` — each needs the service to exist; the push records the image
 * in the sandbox's registry. When the image was already built (`pinned`: its digest, found at submission), one step
 * says so instead and nothing is built again (issue 20 item 4: a source is built once).
 */
export function buildSteps(
  team: string,
  app: string,
  source: { repo: string; tag: string; dockerfilePath: string },
  image: string,
  pinned: string | undefined,
): Step[] {
  const { repo, tag, dockerfilePath } = source;
  if (pinned) {
    return [
      {
        name: `image ${image} exists, build skipped`,
        run(ctx) {
          liveService(ctx.state, team, app);
          ctx.log(`image ${pinnedImage(image, pinned)} is in the registry; deploying it by digest, build skipped`);
        },
      },
    ];
  }
  const digest = simulatedDigest(image);
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
        ctx.log(`built ${image} (${digest.slice(0, 19)})`);
      },
    },
    {
      name: `push image ${image}`,
      run(ctx) {
        liveService(ctx.state, team, app);
        ctx.pushed(image, digest);
        ctx.log(`pushed ${image} digest ${digest}`);
      },
    },
  ];
}

/**
 * GitOps commit, Argo CD sync, rollout and health check; the last step calls `finish`, which applies the outcome to the
 * service and returns its status message, and then marks the service Synced/Healthy. `progressive` (canary or
 * blue-green steps, `rollout-steps.ts`) takes the place of the rolling "wait for rollout".
 */
export function rolloutSteps(
  env: OperationEnv,
  team: string,
  app: string,
  tagOf: (ctx: StepContext) => string,
  healthPath: string,
  finish: (ctx: StepContext, service: ServiceRecord) => string,
  progressive?: Step[],
): Step[] {
  const application = applicationName(team, app);
  const rolling: Step = {
    name: 'wait for rollout',
    run(ctx) {
      const service = liveService(ctx.state, team, app);
      const tag = tagOf(ctx);
      const pod = podName(team, app, ctx.run.name);
      ctx.event(team, app, pod, `pulled image ${runningImage(env, service, tag).reference}`);
      ctx.event(team, app, pod, `container started on port ${service.port}`);
      ctx.log(`deployment ${application}: 1/1 replicas updated`);
    },
  };
  return [
    {
      name: `update GitOps manifest of ${application}`,
      run(ctx) {
        liveService(ctx.state, team, app);
        const tag = tagOf(ctx);
        ctx.log(`set image ${runningImage(env, liveService(ctx.state, team, app), tag).reference} in apps/${team}/${app}/values.yaml`);
        ctx.log(`commit ${sha(ctx.run.name, 'gitops').slice(0, 7)} "${ctx.run.operation} ${team}/${app} ${tag}"`);
      },
    },
    {
      name: `Argo CD sync ${application}`,
      run(ctx) {
        const service = liveService(ctx.state, team, app);
        ctx.log(`application ${application} syncing to revision ${sha(ctx.run.name, 'gitops').slice(0, 7)}`);
        ctx.log(`applied ${progressive ? 'Rollout' : 'Deployment'} ${application}, Service ${application}, Ingress ${service.host}`);
      },
    },
    ...(progressive ?? [rolling]),
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

/** Mark the service as being rolled out by `run` (`docs/api.md#sync-and-health-of-a-deployed-service`: OutOfSync/Progressing while it runs). */
export function startRollout(service: ServiceRecord, run: WorkflowRecord, message: string): void {
  service.syncStatus = 'OutOfSync';
  service.healthStatus = 'Progressing';
  service.message = message;
  service.activeWorkflow = run.name;
  // A new release: the rollout view of an earlier canary or blue-green release no longer describes what runs.
  delete service.rollout;
}

/** A successful rollout of `tag`: the service now runs it, and may later roll back to it. */
export function recordDeployed(service: ServiceRecord, tag: string): string {
  service.imageTag = tag;
  if (!service.deployedTags.includes(tag)) service.deployedTags.push(tag);
  return `deployed ${tag}`;
}

/** The tenant. @throws NotFound `tenant <team> does not exist; run create-tenant first`. */
export function liveTenant(state: SandboxState, team: string): TenantRecord {
  const tenant = own(state.tenants, team);
  if (!tenant) throw new NotFound(`tenant ${team} does not exist; run create-tenant first`);
  return tenant;
}

/** The service, or NotFound (it never existed, or was retired while this workflow ran). */
export function liveService(state: SandboxState, team: string, app: string): ServiceRecord {
  const service = state.services[serviceKey(team, app)];
  if (!service) throw new NotFound(`service ${team}/${app} does not exist (never onboarded, retired or expired)`);
  return service;
}

/**
 * `<team>-<app>` names one Application and one host: a service whose name joins to the same text blocks it (two
 * onboardings that passed the door's check at the same moment).
 * @throws Conflict naming the service that holds the name.
 */
export function requireFreeName(state: SandboxState, team: string, app: string): void {
  const wanted = applicationName(team, app);
  const holder = Object.values(state.services).find((s) => applicationName(s.team, s.name) === wanted && !(s.team === team && s.name === app));
  if (holder) throw new Conflict(`"${wanted}" is already used by service ${holder.team}/${holder.name}; choose another service name`);
}

/** @throws Conflict when `service` is a preview environment (base-service operations do not apply to it). */
export function notPreview(service: ServiceRecord, operation: string): void {
  if (service.preview) {
    throw new Conflict(`${service.team}/${service.name} is a preview environment; ${operation} applies to base services`);
  }
}

/** Every service (previews included) of `team`, in no particular order. */
export function servicesOf(state: SandboxState, team: string): ServiceRecord[] {
  return Object.values(state.services).filter((s) => s.team === team);
}

/** The preview environments of `team/base`. */
export function previewsOf(state: SandboxState, team: string, base: string): ServiceRecord[] {
  return servicesOf(state, team).filter((s) => s.preview?.base === base);
}

/** The sandbox's registry, `registry.<domain>`. */
export function sandboxRegistry(env: OperationEnv): string {
  return `registry.${env.domain}`;
}

/**
 * The image a service runs at `tag`, keyed by its source (its repository and build file, `core/images.ts`), with the
 * digest the sandbox's registry gives it: `registry.<domain>/src/<owner>/<repo>:<tag>`, and as the GitOps manifest
 * names it, `…@sha256:…`.
 */
export function runningImage(env: OperationEnv, service: Pick<ServiceRecord, 'dockerfileRepo' | 'dockerfilePath'>, tag: string): RunningImage & { reference: string } {
  const image = sourceImage(sandboxRegistry(env), { repo: service.dockerfileRepo, tag, dockerfilePath: service.dockerfilePath });
  const digest = simulatedDigest(image);
  return { image, digest, repo: service.dockerfileRepo, dockerfilePath: service.dockerfilePath, reference: pinnedImage(image, digest) };
}

/** Hex SHA-256 of the parts: stable stand-ins for commit ids and image digests. */
export function sha(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex');
}

/** Kubernetes-style pod name `<team>-<app>-<replicaset hash>-<pod suffix>`, stable for one workflow. */
export function podName(team: string, app: string, workflow: string): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  const bytes = createHash('sha256').update(`${team}/${app}/${workflow}`).digest();
  const chars = [...bytes.subarray(0, 15)].map((b) => alphabet[b % alphabet.length]).join('');
  return `${team}-${app}-${chars.slice(0, 10)}-${chars.slice(10, 15)}`;
}

