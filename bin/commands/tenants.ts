/** `pds tenants`: every tenant (`GET /api/v1/tenants`; platform admins only, as the API decides). */
import { apiCommand, contextOf } from '../client/command.js';
import { listTenants } from '../../tools/tenants.js';
import { clientOf } from '../client/api.js';
import { print } from '../client/output.js';

export function tenantsCommand() {
  return apiCommand('tenants', 'list tenants (platform admins)').action(async (_options, command) => {
    const { session, format } = await contextOf(command);
    const list = await clientOf(session).call(listTenants, {});
    print(format, list, (l) => ({
      head: ['name', 'display name', 'cpu', 'memory', 'pods', 'members'],
      rows: l.items.map((t: any) => [t.name, t.displayName, t.quotas.cpu, t.quotas.memory, t.quotas.pods, t.members.length]),
    }));
  });
}
