/**
 * Preview environments: `pds previews [TEAM[/APP]]` lists them with their expiry, `pds previews create TEAM/APP --tag
 * X.Y.Z [--ttl 24h]` opens one (`preview-deploy`), `pds previews delete TEAM/APP --tag X.Y.Z` removes one early
 * (`preview-delete`). `pds preview` stays as the old name of `previews create` (with `--ttl-hours`, hidden).
 *
 * A preview is a service with componentType "preview" (docs/api.md#service); its expiry is not on the record, so it is
 * worked out from the `preview-deploy` workflow that opened it: started + `ttl_hours`.
 */
import { Option, type Command } from 'commander';
import { previewName } from '../../core/names.js';
import { listServices } from '../../tools/services.js';
import { listWorkflows, MAX_WORKFLOWS } from '../../tools/workflows.js';
import { clientOf } from '../client/api.js';
import { apiCommand, contextOf, paramOption, teamApp } from '../client/command.js';
import { usageError } from '../client/errors.js';
import { submit, withWait } from '../client/execute.js';
import { print } from '../client/output.js';
import { ago } from '../client/table.js';

/** `24h`, `2d`, `90m` as whole hours for `ttl_hours`. @throws CliError (usage) for anything else. */
export function ttlHours(text: string): string {
  const m = /^([1-9]\d{0,5})([mhd]?)$/.exec(text);
  const hours = m ? Number(m[1]) * { '': 1, h: 1, d: 24, m: 1 / 60 }[m[2] as '' | 'h' | 'd' | 'm'] : NaN;
  if (!Number.isInteger(hours) || hours < 1 || hours > 720) throw usageError(`--ttl must be whole hours between 1h and 720h (30d), e.g. 24h or 7d (got "${text}")`);
  return String(hours);
}

/** The create command's options and action, under either name. */
function createOptions(command: Command): Command {
  return withWait(
    command
      .argument('<team/app>', 'the service, e.g. acme/web')
      .addOption(paramOption('--tag <tag>', 'the image tag to preview, e.g. 1.5.0', 'image_tag').makeOptionMandatory())
      .addOption(paramOption('--ttl <duration>', 'how long it lives, 1h to 30d, e.g. 24h or 7d', 'ttl_hours').default('24h'))
      .addOption(new Option('--ttl-hours <hours>', 'old spelling of --ttl, in hours').hideHelp()),
  ).action(async (target: string, o: { tag: string; ttl: string; ttlHours?: string }, self: Command) => {
    const { team, app } = teamApp(target);
    const ttl = ttlHours(o.ttlHours ? `${o.ttlHours}h` : o.ttl);
    await submit(self, 'preview-deploy', { team_name: team, component_name: app, image_tag: o.tag, ttl_hours: ttl });
  });
}

/** `pds preview`: the old name of `pds previews create`. */
export function previewCommand() {
  return createOptions(apiCommand('preview', 'open a preview environment (same as previews create)'));
}


export function previewsCommand() {
  const previews = apiCommand('previews', 'list preview environments and when they expire; create, delete')
    .argument('[team[/app]]', 'only this tenant or service, e.g. acme or acme/web')
    .action(async (filter: string | undefined, _o, command: Command) => {
      const [team, app] = filter ? filter.split('/') : [];
      const { session, format } = await contextOf(command);
      const client = clientOf(session);
      const services = await client.call(listServices, { team });
      const opened = await client.call(listWorkflows, { team, operation: 'preview-deploy', limit: MAX_WORKFLOWS });
      const items = services.items
        .filter((s) => s.componentType === 'preview' && (!app || s.name.startsWith(`${app}-preview-`)))
        .map((s) => {
          // Newest first: the latest opening of this preview is the one that set its expiry.
          const from = opened.items.find((w) => w.parameters.team_name === s.team && previewName(w.parameters.component_name ?? '', w.parameters.image_tag ?? '') === s.name);
          const expiresAt = from ? new Date(Date.parse(from.startedAt) + Number(from.parameters.ttl_hours) * 3_600_000).toISOString() : undefined;
          return { ...s, service: from?.parameters.component_name, expiresAt, workflow: from?.name };
        });
      const where = filter ?? 'TEAM/APP';
      print(format, { items, count: items.length }, (l) => ({
        head: ['team', 'preview', 'service', 'tag', 'host', 'expires'],
        rows: l.items.map((p: (typeof items)[number]) => [p.team, p.name, p.service, p.imageTag, p.host, p.expiresAt ? ago(p.expiresAt) : 'unknown']),
        empty: `no previews${filter ? ` of ${filter}` : ''} — open one: pds previews create ${where.includes('/') ? where : `${where}/APP`} --tag X.Y.Z --ttl 24h`,
      }));
    });
  previews.addCommand(createOptions(apiCommand('create', 'open a preview environment of an image tag')));
  previews.addCommand(
    withWait(
      apiCommand('delete', 'remove a preview environment before it expires')
        .argument('<team/app>', 'the service, e.g. acme/web')
        .addOption(paramOption('--tag <tag>', 'the image tag of the preview, e.g. 1.5.0', 'image_tag').makeOptionMandatory()),
    ).action(async (target: string, o: { tag: string }, command: Command) => {
      const { team, app } = teamApp(target);
      await submit(command, 'preview-delete', { team_name: team, component_name: app, image_tag: o.tag });
    }),
  );
  return previews;
}
