/**
 * Argument completion (issue 11 item 7; MCP spec "Completion"): values for the arguments of the resource templates
 * and prompts — team, service, tag, repository, workflow and operation names — drawn from the read tools the caller
 * may call (`call`, so a value comes only from what the caller may see; a refused read yields no values, never an
 * error that tells a tenant exists).
 *
 * Teams are the tenants the caller may list: all of them for platform admins (`platform_list_tenants`), for others
 * the tenants named by the services and audit entries they may see (pds has no "my tenants" read, so a tenant with
 * neither yet is not offered).
 */
import type { CompleteRequestParams, CompleteResult } from '@modelcontextprotocol/server';
import type { AnyTool } from './define.js';
import type { CallInteraction } from './interaction.js';
import { listOperations } from './operations/catalog.js';
import { listRepos } from './repos.js';
import { getService, listServices } from './services.js';
import { listTenants } from './tenants.js';
import { listAudit } from './workflows.js';

/** Most values one answer carries (MCP: at most 100). */
const MAX_VALUES = 100;

type ReadCaller = (tool: AnyTool, args: Record<string, unknown>, interaction: CallInteraction) => Promise<unknown>;

/** The previously filled arguments of the same template or prompt (`context.arguments`). */
type Filled = Readonly<Record<string, string | undefined>>;

interface AuditItem {
  workflowName: string;
  operation: string;
  parameters: Record<string, string>;
}

/** Runs the reads of one completion request; a refused or failed read is no values. */
class Reads {
  constructor(
    private readonly call: ReadCaller,
    private readonly interaction: CallInteraction,
  ) {}

  private async read<T>(tool: AnyTool, args: Record<string, unknown>): Promise<T | undefined> {
    try {
      return (await this.call(tool, args, this.interaction)) as T;
    } catch {
      return undefined;
    }
  }

  private audit(): Promise<AuditItem[]> {
    return this.read<{ items: AuditItem[] }>(listAudit, {}).then((r) => r?.items ?? []);
  }

  async teams(): Promise<string[]> {
    const all = await this.read<{ items: { name: string }[] }>(listTenants, {});
    if (all) return all.items.map((t) => t.name);
    const services = await this.read<{ items: { team: string }[] }>(listServices, {});
    const fromAudit = (await this.audit()).map((e) => e.parameters.team_name).filter((t): t is string => Boolean(t));
    return [...(services?.items.map((s) => s.team) ?? []), ...fromAudit];
  }

  async services(team: string | undefined): Promise<string[]> {
    const listed = await this.read<{ items: { team: string; name: string }[] }>(listServices, team ? { team } : {});
    return listed?.items.map((s) => s.name) ?? [];
  }

  /** Tags deployed, rolled back to or previewed for the service, newest first, the running one first of all. */
  async tags(team: string | undefined, app: string | undefined): Promise<string[]> {
    if (!team || !app) return [];
    const running = await this.read<{ imageTag: string }>(getService, { team, app });
    const fromAudit = (await this.audit())
      .filter((e) => e.parameters.team_name === team && e.parameters.component_name === app)
      .map((e) => e.parameters.git_tag ?? e.parameters.target_tag ?? e.parameters.image_tag)
      .filter((t): t is string => Boolean(t));
    return [running?.imageTag ?? '', ...fromAudit].filter(Boolean);
  }

  async repos(team: string | undefined): Promise<string[]> {
    if (!team) return [];
    const listed = await this.read<{ items: { fullName: string }[] }>(listRepos, { team });
    return listed?.items.map((r) => r.fullName) ?? [];
  }

  async workflows(): Promise<string[]> {
    return (await this.audit()).map((e) => e.workflowName);
  }

  async operations(): Promise<string[]> {
    const listed = await this.read<{ items: { name: string }[] }>(listOperations, {});
    return listed?.items.map((o) => o.name) ?? [];
  }
}

/** Which values an argument takes, by its name in the templates and prompts. */
async function candidates(argument: string, ref: CompleteRequestParams['ref'], filled: Filled, reads: Reads): Promise<string[]> {
  const team = filled.team;
  const app = filled.app ?? filled.service;
  switch (argument) {
    case 'team':
      return reads.teams();
    case 'app':
    case 'service':
      return reads.services(team);
    case 'tag':
      return reads.tags(team, app);
    case 'repo':
      return reads.repos(team);
    case 'name':
      if (ref.type !== 'ref/resource') return [];
      if (ref.uri.startsWith('pds://workflows/')) return reads.workflows();
      if (ref.uri.startsWith('pds://operations/')) return reads.operations();
      return [];
    default:
      return [];
  }
}

/**
 * `completion/complete`: the values of `argument` that start with what was typed, each once, at most 100.
 * @param call runs a read tool as the caller (the server's `call`).
 */
export async function complete(params: CompleteRequestParams, call: ReadCaller, interaction: CallInteraction): Promise<CompleteResult> {
  const filled: Filled = params.context?.arguments ?? {};
  const typed = params.argument.value.toLowerCase();
  const all = await candidates(params.argument.name, params.ref, filled, new Reads(call, interaction));
  const values = [...new Set(all)].filter((v) => v.toLowerCase().startsWith(typed));
  return { completion: { values: values.slice(0, MAX_VALUES), total: values.length, hasMore: values.length > MAX_VALUES } };
}
