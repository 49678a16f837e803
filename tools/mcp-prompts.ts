/**
 * MCP prompts (issue 11 item 7; MCP spec "Prompts"): the three jobs people most often hand an agent, as ready
 * instructions that name the tools in order with their arguments — onboarding a repository, diagnosing an unhealthy
 * service, rolling a service back. A prompt reads nothing itself; the agent's tool calls do, with the caller's access.
 * Their arguments complete through `completion/complete` (`tools/mcp-completions.ts`).
 */
import { ProtocolError, ProtocolErrorCode, type GetPromptResult, type Prompt } from '@modelcontextprotocol/server';
import type { NextCall } from '../core/operations/index.js';
import { MCP_DOOR } from './door.js';

type Args = Readonly<Record<string, string | undefined>>;

interface PromptEntry {
  listed: Prompt;
  /** The instruction text for validated arguments (every required one present). */
  text(args: Args): string;
}

/** A tool call in the words an MCP agent reads. */
const call = (tool: string, args: Record<string, string | number>): string => MCP_DOOR.name({ tool, arguments: args } satisfies NextCall);

const ENTRIES: readonly PromptEntry[] = [
  {
    listed: {
      name: 'onboard-repository',
      title: 'Onboard a repository',
      description: 'Take a repository from nothing to a running, healthy service on pds: build file and CI job, access, onboarding, verification.',
      arguments: [
        { name: 'team', description: 'Tenant the service joins, e.g. "acme"', required: true },
        { name: 'repo', description: 'Repository "<owner>/<repo>", e.g. "acme/web"', required: true },
        { name: 'service', description: 'Service name, e.g. "web" (default: the repository name)', required: false },
      ],
    },
    text: (a) => {
      const team = a.team!;
      const repo = a.repo!;
      const service = a.service ?? (repo.split('/').pop() || repo).toLowerCase();
      return [
        `Onboard the repository ${repo} as service ${service} of tenant ${team} on pds, step by step:`,
        `1. Make sure pds may build it: ${call('platform_list_repos', { team })}. If ${repo} is missing, call ${call('platform_grant_repo_access', { team_name: team, repo })}, ask me to open the URL it returns and install the app, then ${call('platform_sync_repos', { team })}.`,
        `2. Prepare the repository: ${call('platform_scaffold_repository', { team_name: team, component_name: service, dockerfile_repo: repo })} returns the Dockerfile, .dockerignore and .github/workflows/ci.yml with its deploy job, the onboarding parameters and a checklist. Add the files it lists (show me what changes), and tell me to create the PLATFORM_GITHUB_TOKEN secret.`,
        `3. Onboard with the parameters it returned, waiting for the outcome: ${call('platform_deploy_service', { action: 'onboard', team_name: team, component_name: service, dockerfile_repo: repo, git_tag: '0.1.0', port: '<port from step 2>', wait_seconds: 45 })}. If the answer says "settled": false, wait again with platform_get_workflow and wait_seconds.`,
        `4. On success check ${call('platform_get_status', { team, app: service })}; on failure the answer names the failed step and its log tail: run ${call('platform_diagnose_service', { team, app: service })} and tell me what failed.`,
        'Refusals come back at once with what to fix; do not retry a refused call unchanged.',
      ].join('\n');
    },
  },
  {
    listed: {
      name: 'diagnose-service',
      title: 'Diagnose a service',
      description: 'Find out why a service is unhealthy or a deploy failed, and propose the next action.',
      arguments: [
        { name: 'team', description: 'Tenant, e.g. "acme"', required: true },
        { name: 'app', description: 'Service name, e.g. "web"', required: true },
      ],
    },
    text: (a) => {
      const team = a.team!;
      const app = a.app!;
      return [
        `Find out why service ${team}/${app} is not healthy, changing nothing:`,
        `1. ${call('platform_diagnose_service', { team, app })}: status, the last workflow's failed step, recent error lines, quota pressure and probe-path mismatches in one read, with the next calls it suggests.`,
        `2. Where a finding needs more: ${call('platform_get_logs', { team, app, since: '1h' })} for the log lines (crashes, failed probes: 401 on /healthz means the health path needs an auth exemption, wrong ports); platform_get_workflow with the last workflow's name for its steps.`,
        'Then tell me the most likely cause with the evidence, and the one next action (a fixed deploy, platform_rollback_service to the last good tag, or a config change) — do not run it without asking me.',
      ].join('\n');
    },
  },
  {
    listed: {
      name: 'rollback-service',
      title: 'Roll a service back',
      description: 'Return a service to an earlier image tag it ran, and verify it is healthy again.',
      arguments: [
        { name: 'team', description: 'Tenant, e.g. "acme"', required: true },
        { name: 'app', description: 'Service name, e.g. "web"', required: true },
        { name: 'tag', description: 'Image tag to return to, e.g. "0.1.0" (default: the last good one before the current)', required: false },
      ],
    },
    text: (a) => {
      const team = a.team!;
      const app = a.app!;
      const pick = a.tag
        ? `The target is ${a.tag}; check in ${call('platform_list_workflows', { team, service: app })} that a deploy of it succeeded.`
        : `Choose the target: in ${call('platform_list_workflows', { team, service: app })}, the newest deploy that succeeded before the current tag.`;
      return [
        `Roll service ${team}/${app} back:`,
        `1. ${call('platform_get_service', { team, app })}: the tag it runs now.`,
        `2. ${pick} Tell me the current and the target tag before going on.`,
        `3. ${call('platform_rollback_service', { team_name: team, component_name: app, target_tag: a.tag ?? '<target tag>', wait_seconds: 45 })} (a tag it never ran is refused at once).`,
        `4. Once it settled (wait again with platform_get_workflow and wait_seconds if not), ${call('platform_get_status', { team, app })} must say Synced and Healthy.`,
      ].join('\n');
    },
  },
];

/** `prompts/list`. */
export const PROMPTS: readonly Prompt[] = ENTRIES.map((e) => e.listed);

/**
 * `prompts/get`: the prompt's instruction as one user message.
 * @throws ProtocolError `-32602` for an unknown prompt or a missing required argument, naming what is allowed.
 */
export function getPrompt(name: string, args: Args = {}): GetPromptResult {
  const entry = ENTRIES.find((e) => e.listed.name === name);
  if (!entry) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown prompt "${name}"; prompts: ${PROMPTS.map((p) => p.name).join(', ')}`);
  const missing = (entry.listed.arguments ?? []).filter((a) => a.required && !args[a.name]?.trim()).map((a) => a.name);
  if (missing.length) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `prompt "${name}" needs ${missing.join(', ')}`);
  return {
    description: entry.listed.description,
    messages: [{ role: 'user', content: { type: 'text', text: entry.text(args) } }],
  };
}
