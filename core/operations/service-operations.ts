/**
 * The operations on one service (`docs/api.md#operations`): `deploy-service` (actions `onboard`, `deploy`,
 * `update-config`), `rollback-service`, `provision-database` and `retire-service`.
 */
import { z } from 'zod';
import { applicationName, serviceHost } from '../names.js';
import { defineOperation, type FollowUp, type NextCall } from './contract.js';
import {
  checkOnboardingArtifacts,
  requireFreeApplicationName,
  requireDeployedTag,
  requireNewService,
  requireQuotaHeadroom,
  requireRegisteredRepository,
  requireService,
  requireServiceRepository,
  requireTenant,
} from './preflight.js';
import {
  checkCombinedName,
  ComponentNameParam,
  EnvVarsParam,
  GitTagParam,
  HealthCheckPathParam,
  PortParam,
  QuantityParam,
  RelativePathParam,
  NAMES_VALID,
  RepoParam,
  TeamNameParam,
  whenValid,
  type EnvVar,
} from './parameters.js';
import { SemVerTag } from '../model.js';
import { CanaryStepsParam, RolloutStrategy } from '../rollouts.js';

/** The service an operation acts on. */
export interface ServiceTarget {
  team_name: string;
  component_name: string;
}

/** The rollout settings onboard and update-config may set (issue 22), beside the parameters of `docs/api.md`. */
export interface RolloutParams {
  strategy?: RolloutStrategy;
  /** Normalized `canary_steps` text (`core/rollouts.ts` `parseCanarySteps` reads it). */
  canary_steps?: string;
}

/** `deploy-service` parameters, by action (`docs/api.md#execute-rules` 3 and "Operation parameters seen in requests"). */
export type DeployServiceParams =
  | (ServiceTarget & { action: 'deploy'; git_tag: string; dockerfile_repo: string; dockerfile_path?: string; move_from_repo?: string })
  | (ServiceTarget &
      RolloutParams & {
        action: 'onboard';
        git_tag: string;
        dockerfile_repo: string;
        port: string;
        service_template?: string;
        health_check_path?: string;
        dockerfile_path?: string;
      })
  // env_vars, strategy or both: a strategy change alone keeps the environment.
  | (ServiceTarget & RolloutParams & { action: 'update-config'; env_vars?: EnvVar[] });

/**
 * What a deploy or onboarding of `deploy-service` may carry beside its parameters (issue 20 item 4), never from the
 * caller: the digest its image must have — set at the door when a promotion rule verified that digest, by
 * `platform_promote_image` (the digest running in the source), or by the sandbox engine when the image was already
 * built. A pinned deploy builds nothing: it deploys that digest, and fails if the registry does not hold it. Audited
 * as `image_digest` (with `promoted_from`) beside the operation's parameters (`docs/api.md#beside-the-contract`).
 */
export interface PinnedImage {
  /** `sha256:<64 hex>`. */
  image_digest?: string;
}

/** The three actions of `deploy-service`. */
export const DEPLOY_ACTIONS = ['deploy', 'update-config', 'onboard'] as const;
export type DeployAction = (typeof DEPLOY_ACTIONS)[number];

/**
 * Which optional parameters each action requires and accepts; any other optional parameter is refused. `oneOf`: at
 * least one of these is required (update-config changes the environment, the rollout strategy, or both).
 */
export const DEPLOY_ACTION_RULES: Record<DeployAction, { requires: readonly string[]; accepts: readonly string[]; oneOf?: readonly string[] }> = {
  deploy: { requires: ['git_tag', 'dockerfile_repo'], accepts: ['dockerfile_path', 'move_from_repo'] },
  'update-config': { requires: [], accepts: ['env_vars', 'strategy', 'canary_steps'], oneOf: ['env_vars', 'strategy'] },
  onboard: {
    requires: ['git_tag', 'dockerfile_repo', 'port'],
    accepts: ['service_template', 'health_check_path', 'dockerfile_path', 'strategy', 'canary_steps'],
  },
};
const DEPLOY_OPTIONAL = [
  'git_tag',
  'dockerfile_repo',
  'dockerfile_path',
  'env_vars',
  'port',
  'service_template',
  'health_check_path',
  'move_from_repo',
  'strategy',
  'canary_steps',
];

const serviceTarget = (p: ServiceTarget) => ({ team: p.team_name, service: p.component_name });

/** After a change to a running service: look at its sync and health. */
const checkStatus: FollowUp<ServiceTarget> = {
  tool: 'platform_get_status',
  why: 'check its sync and health status',
  arguments: (p) => ({ team: p.team_name, app: p.component_name }),
};

/**
 * Per action, the fields it requires, as JSON Schema beside the object's own (`oneOf` on `action`), so a client can
 * check a call before sending it; the refinement below enforces the same rules with messages. `oneOf` (not `if`/`then`)
 * because OpenAPI 3.0, which shares this schema, knows no `if`.
 */
const PER_ACTION_SCHEMA = {
  oneOf: DEPLOY_ACTIONS.map((action) => {
    const { requires, oneOf } = DEPLOY_ACTION_RULES[action];
    return {
      properties: { action: { enum: [action] } },
      // OpenAPI 3.0 forbids an empty `required`.
      ...(requires.length > 0 ? { required: [...requires] } : {}),
      ...(oneOf ? { anyOf: oneOf.map((field) => ({ required: [field] })) } : {}),
    };
  }),
};

/** How to ship a new tag of an existing service, for refusals that point there. */
const deployCall = (p: ServiceTarget & { git_tag: string; dockerfile_repo: string }): NextCall => ({
  tool: 'platform_deploy_service',
  arguments: { action: 'deploy', team_name: p.team_name, component_name: p.component_name, dockerfile_repo: p.dockerfile_repo, git_tag: p.git_tag },
});

export const deployService = defineOperation<'deploy-service', z.ZodObject, DeployServiceParams>({
  id: 'deploy-service',
  toolset: 'deploy',
  tool: 'platform_deploy_service',
  title: 'Deploy, onboard or reconfigure a service',
  displayName: 'Deploy Service',
  riskLevel: 'medium',
  requiresConfirm: false,
  // update-config replaces the whole environment (variables not sent are removed), and deploy replaces the running
  // version: what was there cannot be had back by calling again with the same arguments.
  destructive: true,
  role: 'member',
  duration: '2-10 minutes (image build and rollout; update-config about 1 minute)',
  followUp: checkStatus,
  description:
    'Builds the container image of a repository at a git tag and deploys it through GitOps, or changes a service\'s ' +
    'environment. action=onboard registers a new service (first tag usually "0.1.0") with its port and optional ' +
    'template and health check path; action=deploy ships a new tag of an onboarded service (what CI calls on every ' +
    'push to main); action=update-config replaces the whole environment with env_vars (variables not listed are ' +
    'removed: send the full set). Refused at once, with the fix, when the tenant, service, build file or quota room ' +
    'is missing, the service exists (onboard), or the repository is not registered or not the service\'s. It does not ' +
    'write the build file or CI job (platform_scaffold_repository does).',
  parameters: z
    .strictObject({
      action: z.enum(DEPLOY_ACTIONS).describe('"onboard" (first time), "deploy" (new tag) or "update-config" (environment)'),
      team_name: TeamNameParam,
      component_name: ComponentNameParam,
      git_tag: GitTagParam.optional().describe('Git tag to build and deploy, SemVer X.Y.Z, e.g. "0.1.1". Required for deploy and onboard'),
      dockerfile_repo: RepoParam.optional().describe('"<owner>/<repo>" holding the build file, e.g. "acme/web". Required for deploy and onboard'),
      dockerfile_path: RelativePathParam.optional(),
      // No pattern: preflight accepts only the service's own repository here, so nothing else reaches a record.
      move_from_repo: z.string().max(141).optional().describe('Repository a deploy moves the service from'),
      env_vars: EnvVarsParam.optional().describe('KEY=VALUE lines, the full environment, e.g. "LOG_LEVEL=info". Required for update-config'),
      port: PortParam.optional().describe('Container port, e.g. "8787". Required for onboard'),
      service_template: z
        .string()
        .regex(/^[a-z][a-z0-9-]{0,40}$/, 'must be a template name, e.g. "default"')
        .optional()
        .describe('Platform service template for onboard, e.g. "default" (the default)'),
      health_check_path: HealthCheckPathParam.optional().describe('Probe path for onboard when the app does not serve /healthz, e.g. "/api/health"'),
      strategy: RolloutStrategy.optional().describe('Rollout of later releases, onboard or update-config: "rolling" (default), "canary" or "blue-green"'),
      canary_steps: CanaryStepsParam.optional().describe('With strategy=canary: traffic steps "<weight>%:<pause>,…", default "10%:2m,50%:5m"'),
    })
    .meta(PER_ACTION_SCHEMA)
    // Runs whenever `action` is valid, so the fields an action requires are reported with every other problem at once.
    .superRefine((value, ctx) => {
      const rules = DEPLOY_ACTION_RULES[value.action];
      const given = value as Record<string, unknown>;
      for (const field of rules.requires) {
        if (given[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: `is required for action=${value.action}` });
      }
      if (rules.oneOf && rules.oneOf.every((field) => given[field] === undefined)) {
        ctx.addIssue({ code: 'custom', path: [rules.oneOf[0]!], message: `is required for action=${value.action} unless ${rules.oneOf.slice(1).join(' or ')} is given` });
      }
      if (given.canary_steps !== undefined && given.strategy !== 'canary') {
        ctx.addIssue({ code: 'custom', path: ['canary_steps'], message: 'needs strategy="canary" in the same call' });
      }
      for (const field of DEPLOY_OPTIONAL) {
        if (given[field] !== undefined && !rules.requires.includes(field) && !rules.accepts.includes(field)) {
          const which = DEPLOY_ACTIONS.filter((a) => [...DEPLOY_ACTION_RULES[a].requires, ...DEPLOY_ACTION_RULES[a].accepts].includes(field));
          ctx.addIssue({ code: 'custom', path: [field], message: `is not used by action=${value.action}; it applies to action=${which.join(' or ')}` });
        }
      }
    }, whenValid('action'))
    .superRefine(checkCombinedName, NAMES_VALID),
  secretParameters: ['env_vars'],
  target: serviceTarget,
  async preflight(p, ctx) {
    if (p.action === 'update-config') return void (await requireService(ctx, p.team_name, p.component_name));
    if (p.action === 'deploy') {
      await requireTenant(ctx, p.team_name);
      await requireRegisteredRepository(ctx, p.team_name, p.dockerfile_repo);
      const onboard: NextCall = {
        tool: 'platform_deploy_service',
        arguments: { ...deployCall(p).arguments, action: 'onboard', port: '<container port>' },
      };
      await requireService(ctx, p.team_name, p.component_name, onboard);
      const target = { team: p.team_name, service: p.component_name, repo: p.dockerfile_repo, tag: p.git_tag };
      return void (await requireServiceRepository(ctx, p.move_from_repo === undefined ? target : { ...target, moveFrom: p.move_from_repo }));
    }
    await requireNewService(ctx, p.team_name, p.component_name, deployCall(p));
    await requireRegisteredRepository(ctx, p.team_name, p.dockerfile_repo);
    await requireFreeApplicationName(ctx, p.team_name, p.component_name);
    const warnings = await checkOnboardingArtifacts(ctx, { team: p.team_name, repo: p.dockerfile_repo, dockerfilePath: p.dockerfile_path });
    return { warnings: [...(await requireQuotaHeadroom(ctx, p.team_name, 'a new service')), ...warnings] };
  },
  summarize: (p) =>
    p.action === 'update-config'
      ? [
          p.env_vars && `replace the environment of ${p.team_name}/${p.component_name} with ${p.env_vars.length} variable${p.env_vars.length === 1 ? '' : 's'}`,
          p.strategy && `set the rollout strategy of ${p.team_name}/${p.component_name} to ${p.strategy}`,
        ]
          .filter(Boolean)
          .join(' and ')
      : `${p.action} ${p.team_name}/${p.component_name} at ${p.git_tag} from ${p.dockerfile_repo}${p.action === 'onboard' && p.strategy ? ` (strategy ${p.strategy})` : ''}`,
});

export const provisionDatabase = defineOperation({
  id: 'provision-database',
  toolset: 'deploy',
  tool: 'platform_provision_database',
  title: 'Provision a database for a service',
  displayName: 'Provision Database',
  riskLevel: 'medium',
  requiresConfirm: false,
  destructive: false,
  role: 'member',
  duration: '1-5 minutes',
  followUp: { tool: 'platform_get_service', why: 'see hasDatabase=true', arguments: (p) => ({ team: p.team_name, app: p.component_name }) },
  description:
    'Provisions a relational database (PostgreSQL) for one existing service and hands its connection to the service. ' +
    'It does not migrate data or resize an existing database; a service has one database.',
  parameters: z
    .strictObject({
      team_name: TeamNameParam,
      component_name: ComponentNameParam,
      engine: z.enum(['postgres']).optional().describe('Database engine; only "postgres" (the default)'),
      storage: QuantityParam('1Gi').optional().describe('Volume size, e.g. "1Gi" (default "1Gi")'),
    })
    .superRefine(checkCombinedName, NAMES_VALID),
  target: serviceTarget,
  preflight: async (p, ctx) => requireService(ctx, p.team_name, p.component_name),
  summarize: (p) => `provision a ${p.engine ?? 'postgres'} database (${p.storage ?? '1Gi'}) for ${p.team_name}/${p.component_name}`,
});

export const retireService = defineOperation({
  id: 'retire-service',
  toolset: 'deploy',
  tool: 'platform_retire_service',
  title: 'Retire a service permanently',
  displayName: 'Retire Service',
  riskLevel: 'high',
  requiresConfirm: true,
  destructive: true,
  role: 'admin',
  duration: 'about 1 minute',
  description:
    'Permanently removes a service: its deployment, GitOps Application, host, database and preview environments. ' +
    'Needs a person\'s confirmation: a client that supports elicitation asks them (yes/no, with the plan); otherwise ' +
    'the first call changes nothing and answers with the plan and a "confirm" value (also in structuredContent) — ' +
    'repeat the call with it (valid 5 minutes, once). Use rollback or a deploy instead to fix a bad release.',
  parameters: z.strictObject({ team_name: TeamNameParam, component_name: ComponentNameParam }).superRefine(checkCombinedName, NAMES_VALID),
  target: serviceTarget,
  preflight: async (p, ctx) => requireService(ctx, p.team_name, p.component_name),
  summarize: (p, ctx) =>
    `permanently remove service ${p.team_name}/${p.component_name} (Application ${applicationName(p.team_name, p.component_name)}, ` +
    `host ${serviceHost(p.team_name, p.component_name, ctx.domain)}, its database and preview environments)`,
});

export const rollbackService = defineOperation({
  id: 'rollback-service',
  toolset: 'deploy',
  tool: 'platform_rollback_service',
  title: 'Roll a service back to an earlier image tag',
  displayName: 'Rollback Service',
  riskLevel: 'medium',
  requiresConfirm: false,
  destructive: false,
  role: 'member',
  duration: 'about 1 minute (no rebuild)',
  followUp: checkStatus,
  description:
    'Returns a service to an image tag it ran before, without rebuilding. Use when a release is bad; earlier tags: ' +
    'platform_list_workflows. Refused at once for a tag it never ran.',
  parameters: z
    .strictObject({
      team_name: TeamNameParam,
      component_name: ComponentNameParam,
      target_tag: SemVerTag.describe('Image tag to return to, SemVer X.Y.Z, e.g. "0.1.0"'),
    })
    .superRefine(checkCombinedName, NAMES_VALID),
  target: serviceTarget,
  preflight: async (p, ctx) => requireDeployedTag(ctx, p.team_name, p.component_name, p.target_tag),
  summarize: (p) => `roll ${p.team_name}/${p.component_name} back to ${p.target_tag}`,
});

/** The service operations, by id. */
export const serviceOperations = {
  'deploy-service': deployService,
  'provision-database': provisionDatabase,
  'retire-service': retireService,
  'rollback-service': rollbackService,
} as const;
