/**
 * `pds tenants`: every tenant (`GET /api/v1/tenants`; platform admins only, as the API decides).
 * `pds tenants create TEAM [--admins a,b] [--members …] [--viewers …] [--wait]`: a new tenant (`create-tenant`).
 */
import type { Command } from 'commander';
import { listTenants } from '../../tools/tenants.js';
import { clientOf } from '../client/api.js';
import { apiCommand, contextOf, paramOption } from '../client/command.js';
import { submit, withWait } from '../client/execute.js';
import { print } from '../client/output.js';

export function tenantsCommand() {
  const tenants = apiCommand('tenants', 'list tenants (platform admins); create one').action(async (_options, command: Command) => {
    const { session, format } = await contextOf(command);
    const list = await clientOf(session).call(listTenants, {});
    print(format, list, (l) => ({
      head: ['name', 'display name', 'cpu', 'memory', 'pods', 'members'],
      rows: l.items.map((t: any) => [t.name, t.displayName, t.quotas.cpu, t.quotas.memory, t.quotas.pods, t.members.length]),
      empty: 'no tenants yet — create one: pds tenants create TEAM --admins you@example.com --wait',
    }));
  });
  tenants.addCommand(
    withWait(
      apiCommand('create', 'create a tenant (platform admins)')
        .argument('<team>', 'the tenant name, a DNS label, e.g. acme')
        .addOption(paramOption('--admins <users>', 'comma-separated tenant admins (default: you), e.g. alice,bob@example.com', 'admins'))
        .addOption(paramOption('--members <users>', 'comma-separated users who deploy and operate, e.g. carol', 'members'))
        .addOption(paramOption('--viewers <users>', 'comma-separated users who only read, e.g. dave', 'viewers'))
        .addOption(paramOption('--display-name <name>', 'human-readable name, e.g. "Acme Payments"', 'display_name'))
        .addOption(paramOption('--description <text>', 'what the team does', 'description'))
        .addOption(paramOption('--contact-email <email>', 'team contact, e.g. acme@example.com', 'contact_email'))
        .addOption(paramOption('--cpu <quantity>', 'CPU quota, e.g. 4', 'cpu'))
        .addOption(paramOption('--memory <quantity>', 'memory quota, e.g. 8Gi', 'memory'))
        .addOption(paramOption('--pods <count>', 'pod quota, e.g. 20', 'pods')),
    ).action(async (team: string, o: Record<string, string | undefined>, command: Command) => {
      await submit(command, 'create-tenant', {
        team_name: team,
        admins: o.admins,
        members: o.members,
        viewers: o.viewers,
        display_name: o.displayName,
        description: o.description,
        contact_email: o.contactEmail,
        cpu: o.cpu,
        memory: o.memory,
        pods: o.pods,
      });
    }),
  );
  return tenants;
}
