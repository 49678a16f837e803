/** `pds services [--team T]`: the services the caller may see (`GET /api/v1/services`). */
import { apiCommand, contextOf } from '../client/command.js';
import { listServices } from '../../tools/services.js';
import { clientOf } from '../client/api.js';
import { print } from '../client/output.js';

export function servicesCommand() {
  return apiCommand('services', 'list services (of one team with --team)')
    .option('--team <team>', 'only this tenant, e.g. acme')
    .action(async (options: { team?: string }, command) => {
      const { session, format } = await contextOf(command);
      const list = await clientOf(session).call(listServices, { team: options.team });
      print(format, list, (l) => ({
        head: ['team', 'name', 'image', 'host', 'port'],
        rows: l.items.map((s: any) => [s.team, s.name, s.imageTag, s.host, s.port]),
      }));
    });
}
