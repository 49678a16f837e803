/**
 * `pds webhooks get TEAM`, `pds webhooks set TEAM -f FILE`, `pds webhooks deliveries TEAM`: a tenant's webhooks and
 * their deliveries (README "Governance"; `GET`/`PUT /api/v1/tenants/{name}/webhooks`,
 * `GET /api/v1/tenants/{name}/webhooks/deliveries`). The file is YAML or JSON: a list of hooks, or `{ hooks: [...] }`;
 * `-f -` reads standard input. The server validates it. A new hook's secret is printed once, on standard error too.
 */
import { readFile } from 'node:fs/promises';
import { text as readAll } from 'node:stream/consumers';
import { Command } from 'commander';
import { parse } from 'yaml';
import type { ToolInput } from '../../tools/rest-client.js';
import { getTenantWebhooks, listWebhookDeliveries, setTenantWebhooks } from '../../tools/webhooks.js';
import { clientOf } from '../client/api.js';
import { apiCommand, contextOf } from '../client/command.js';
import { usageError } from '../client/errors.js';
import { print, type TableView } from '../client/output.js';

type Hooks = ToolInput<typeof setTenantWebhooks>['hooks'];

/** One row per hook. */
function hookTable(hooks: any[]): TableView {
  return { head: ['id', 'format', 'events', 'url'], rows: hooks.map((h) => [h.id, h.format, h.events.join(', '), h.url]) };
}

/** The hooks in `file` as sent: the server validates them, so a wrong one is refused with the server's message. */
async function readHooks(file: string): Promise<Hooks> {
  let text: string;
  try {
    text = file === '-' ? await readAll(process.stdin) : await readFile(file, 'utf8');
  } catch (err) {
    throw usageError(`cannot read ${file}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parse(text) ?? [];
  } catch (err) {
    throw usageError(`${file} is not YAML or JSON: ${(err as Error).message}`);
  }
  if (Array.isArray(doc)) return doc as Hooks;
  if (doc && typeof doc === 'object' && Array.isArray((doc as { hooks?: unknown }).hooks)) return (doc as { hooks: Hooks }).hooks;
  throw usageError(`${file} must hold a list of hooks, or "hooks:" with a list (each with url, events and optionally id and format)`);
}

export function webhooksCommand() {
  const get = apiCommand('get', "show a tenant's webhooks (never their secrets)")
    .argument('<team>', 'the tenant, e.g. acme')
    .action(async (team: string, _o, command) => {
      const { session, format } = await contextOf(command);
      const answer = await clientOf(session).call(getTenantWebhooks, { name: team });
      print(format, answer.hooks, hookTable);
    });
  const set = apiCommand('set', "replace a tenant's webhooks (tenant admins); keep a hook by its id")
    .argument('<team>', 'the tenant, e.g. acme')
    .requiredOption('-f, --file <file>', 'the hooks as YAML or JSON; - reads standard input')
    .action(async (team: string, o: { file: string }, command) => {
      const { session, format } = await contextOf(command);
      const answer = await clientOf(session).call(setTenantWebhooks, { name: team, hooks: await readHooks(o.file) });
      for (const hook of answer.hooks) {
        if (hook.secret) process.stderr.write(`Secret of new hook ${hook.id} (shown once; verify X-PDS-Signature-256 with it): ${hook.secret}\n`);
      }
      print(format, answer.hooks, hookTable);
    });
  const deliveries = apiCommand('deliveries', "a tenant's recent webhook deliveries, newest first")
    .argument('<team>', 'the tenant, e.g. acme')
    .option('--limit <n>', 'how many (1 to 200)', '50')
    .action(async (team: string, o: { limit: string }, command) => {
      const { session, format } = await contextOf(command);
      const list = await clientOf(session).call(listWebhookDeliveries, { name: team, limit: o.limit });
      print(format, list, (l) => ({
        head: ['time', 'event', 'hook', 'attempts', 'status', 'outcome', 'next attempt'],
        rows: l.items.map((d: any) => [d.createdAt, d.event, d.hookId, String(d.attempts), d.lastStatusCode === null ? '-' : String(d.lastStatusCode), d.outcome, d.nextAttemptAt ?? '-']),
      }));
    });
  return new Command('webhooks').summary("a tenant's webhooks and their deliveries").addCommand(get).addCommand(set).addCommand(deliveries);
}
