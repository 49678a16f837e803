/** Plans of `create-tenant` and `delete-tenant` (see `plan.ts`). */
import { randomUUID } from 'node:crypto';
import { Conflict } from '../../core/errors.js';
import type { Member, Quotas } from '../../core/model.js';
import { applicationName } from '../../core/names.js';
import type { OperationParams } from '../../core/operations/index.js';
import type { Plan } from './plan.js';
import { own, serviceKey, type TenantRecord } from './state.js';
import { liveTenant, servicesOf, sha } from './steps.js';

/** Quotas of a tenant created without `cpu`, `memory` or `pods`. */
export const DEFAULT_QUOTAS: Quotas = { cpu: '4', memory: '8Gi', pods: '20' };

/**
 * `create-tenant`: namespace, quotas and members — `admins` (else the submitter) with role `admin`, then `members`
 * (`member`) and `viewers` (`viewer`); a user named in several lists keeps the strongest role.
 */
export function createTenant(p: OperationParams<'create-tenant'>, userId: string): Plan {
  const team = p.team_name;
  const quotas: Quotas = {
    cpu: p.cpu ?? DEFAULT_QUOTAS.cpu,
    memory: p.memory ?? DEFAULT_QUOTAS.memory,
    pods: p.pods ?? DEFAULT_QUOTAS.pods,
  };
  const listed = p.admins ?? [];
  const admins = listed.length > 0 ? listed : [userId];
  const members: Member[] = [];
  const seen = new Set<string>();
  for (const [ids, role] of [[admins, 'admin'], [p.members ?? [], 'member'], [p.viewers ?? [], 'viewer']] as const) {
    for (const id of ids) if (!seen.has(id)) seen.add(id), members.push({ userId: id, role });
  }
  return {
    team,
    app: '',
    steps: [
      {
        name: `validate tenant ${team}`,
        run(ctx) {
          if (own(ctx.state.tenants, team)) throw new Conflict(`tenant ${team} already exists`);
          ctx.log(`tenant ${team}: admins ${admins.join(', ')}; quotas cpu ${quotas.cpu}, memory ${quotas.memory}, pods ${quotas.pods}`);
        },
      },
      {
        name: `create namespace ${team}`,
        run(ctx) {
          if (own(ctx.state.tenants, team)) throw new Conflict(`tenant ${team} already exists`);
          const tenant: TenantRecord = {
            name: team,
            displayName: p.display_name?.trim() || team,
            description: p.description?.trim() ?? '',
            contactEmail: p.contact_email?.trim() ?? '',
            quotas,
            members: members.map((m) => ({ ...m })),
            createdAt: ctx.now.toISOString(),
            uid: randomUUID(),
          };
          ctx.state.tenants[team] = tenant;
          ctx.log(`namespace/${team} created (label pds.io/tenant=${team})`);
        },
      },
      {
        name: `apply ResourceQuota cpu=${quotas.cpu} memory=${quotas.memory} pods=${quotas.pods}`,
        run(ctx) {
          liveTenant(ctx.state, team);
          ctx.log(`resourcequota/${team}-quota configured in namespace ${team}`);
        },
      },
      {
        name: `bind roles (admin: ${admins.join(', ')})`,
        run(ctx) {
          liveTenant(ctx.state, team);
          for (const m of members) ctx.log(`rolebinding/${team}-${m.role} bound to ${m.userId}`);
        },
      },
      {
        name: `register tenant ${team} in the GitOps repository`,
        run(ctx) {
          liveTenant(ctx.state, team);
          ctx.log(`commit ${sha(ctx.run.name, 'tenant').slice(0, 7)} "add tenant ${team}"`);
        },
      },
    ],
    done: () => `tenant ${team} created`,
  };
}

/** `delete-tenant`: remove the tenant, its services and its repository registrations. */
export function deleteTenant(p: OperationParams<'delete-tenant'>): Plan {
  const team = p.team_name;
  return {
    team,
    app: '',
    steps: [
      {
        name: `validate tenant ${team}`,
        run(ctx) {
          liveTenant(ctx.state, team);
          const names = servicesOf(ctx.state, team).map((s) => s.name);
          ctx.log(names.length ? `services to remove: ${names.join(', ')}` : 'tenant has no services');
        },
      },
      {
        name: `delete Argo CD Applications of ${team}`,
        run(ctx) {
          liveTenant(ctx.state, team);
          for (const s of servicesOf(ctx.state, team)) {
            delete ctx.state.services[serviceKey(team, s.name)];
            ctx.log(`application ${applicationName(team, s.name)} deleted`);
          }
        },
      },
      {
        name: `delete namespace ${team}`,
        run(ctx) {
          liveTenant(ctx.state, team);
          delete ctx.state.tenants[team];
          ctx.log(`namespace/${team} deleted`);
        },
      },
    ],
    done: () => `tenant ${team} deleted`,
  };
}
