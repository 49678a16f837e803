/**
 * Plans of `preview-deploy` and `preview-delete` (see `plan.ts`): a preview is a service named
 * `<component>-preview-<x>-<y>-<z>` (componentType `preview`) with its own host and an expiry (`previews.ts`).
 */
import { Conflict, NotFound } from '../../core/errors.js';
import { applicationName, previewName, serviceHost } from '../../core/names.js';
import type { OperationParams } from '../../core/operations/index.js';
import type { OperationEnv, Plan } from './plan.js';
import { serviceKey, type SandboxState, type ServiceRecord } from './state.js';
import { liveService, liveTenant, previewsOf, recordDeployed, requireFreeName, rolloutSteps, startRollout } from './steps.js';

/** `preview-deploy`: create or refresh the preview of `component_name` at `image_tag`, expiring after `ttl_hours`. */
export function previewDeploy(p: OperationParams<'preview-deploy'>, state: Readonly<SandboxState>, env: OperationEnv): Plan {
  const { team_name: team, component_name: base, image_tag: tag } = p;
  const ttlHours = Number(p.ttl_hours);
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
          liveTenant(ctx.state, team);
          const baseService = ctx.state.services[serviceKey(team, base)];
          if (!baseService || baseService.preview) {
            throw new NotFound(`service ${team}/${base} is not onboarded; a preview needs its base service`);
          }
          const expiresAt = new Date(ctx.now.getTime() + ttlHours * ctx.env.hourMs).toISOString();
          const existing = ctx.state.services[serviceKey(team, name)];
          if (existing && !existing.preview) throw new Conflict(`${team}/${name} is a service, not a preview; choose another image_tag`);
          requireFreeName(ctx.state, team, name);
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
            preview: { base, imageTag: tag, ttlHours: p.ttl_hours, expiresAt },
          };
          ctx.state.services[serviceKey(team, name)] = preview;
          startRollout(preview, ctx.run, `deploying preview ${tag}`);
          ctx.log(`preview ${team}/${name} of ${base}@${tag} at https://${preview.host}, expires ${expiresAt}`);
        },
      },
      {
        name: `create Argo CD Application ${applicationName(team, name)}`,
        run(ctx) {
          liveService(ctx.state, team, name);
          ctx.log(`application ${applicationName(team, name)} created from ${applicationName(team, base)} with image tag ${tag}`);
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

/** `preview-delete`: remove the preview of `component_name` at `image_tag` now. */
export function previewDelete(p: OperationParams<'preview-delete'>): Plan {
  const { team_name: team, component_name: base, image_tag: tag } = p;
  const name = previewName(base, tag);
  return {
    team,
    app: name,
    steps: [
      {
        name: `validate removal of preview ${team}/${name}`,
        run(ctx) {
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
        name: `delete Argo CD Application ${applicationName(team, name)}`,
        run(ctx) {
          delete ctx.state.services[serviceKey(team, name)];
          ctx.log(`application ${applicationName(team, name)} deleted; Deployment, Service and Ingress pruned`);
        },
      },
    ],
    done: () => `preview ${team}/${name} deleted`,
  };
}
