/**
 * Governance through invoke() on the real sandbox (issue 20 items 1–3): the policy is validated, read by members and
 * written only by tenant admins; every change is an event in the tenant's feed and never an audit entry; an execution
 * covered by an active freeze window is refused before anything is recorded, and a tenant admin acting as a person
 * may override it with a reason that is audited and is an event.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { activeFreeze, describeFreeze, durationMs, parseApprover, TenantPolicy } from '../../core/governance/policy.js';
import type { Platform } from '../../core/ports.js';
import type { Identity, TokenKind } from '../../auth/identity.js';
import { invoke, type InvokeDeps } from '../../tools/invoke.js';
import { allTools } from '../../tools/registry.js';
import { ONBOARD, openSandbox, run, tempDir } from '../sandbox/helpers.js';

const who = (userId: string, tokenKind: TokenKind = 'self-issued', admin = false): Identity => ({ userId, groups: [], admin, tokenKind });
const tool = (name: string) => allTools.find((t) => t.name === name)!;

/** Always active: a window starts every minute and lasts two. */
const ALWAYS = { name: 'always', schedule: '* * * * *', duration: '2m', timeZone: 'Europe/Berlin', operations: ['rollback-service'], reason: 'release freeze' };
const ROLLBACK = { team_name: 'acme', component_name: 'web', target_tag: '0.1.0' };

async function setUp() {
  const platform: Platform = await openSandbox(await tempDir(), { stepMs: 0 });
  await run(platform, 'create-tenant', { team_name: 'acme', admins: 'alice', members: 'carol', viewers: 'dave' });
  await run(platform, 'deploy-service', ONBOARD);
  const deps: InvokeDeps = { platform, config: loadConfig({ PDS_DOMAIN: 'apps.test' }), confirmSecret: new TextEncoder().encode('x'.repeat(32)) };
  const call = (name: string, input: unknown, as: Identity) => invoke(tool(name), input, as, deps);
  const audit = () => platform.audit.query({ visible: 'all', limit: 1000 });
  return { platform, call, audit };
}

describe('the policy document', () => {
  it('accepts the documented fields and refuses what is not', () => {
    const ok = TenantPolicy.safeParse({
      approvals: { operations: ['deploy-service'], required: 1, approvers: ['alice', 'group:sre', 'role:admin'] },
      freezeWindows: [ALWAYS],
      promotion: { from: 'acme-staging', minHealthy: '30m' },
    });
    expect(ok.success).toBe(true);
    expect(ok.data?.approvals?.expiresAfter).toBe('24h');
    for (const bad of [
      { freezeWindows: [{ ...ALWAYS, schedule: 'every friday' }] },
      { freezeWindows: [{ ...ALWAYS, timeZone: 'Mars/Olympus' }] },
      { freezeWindows: [{ ...ALWAYS, duration: '2 hours' }] },
      { freezeWindows: [{ ...ALWAYS, operations: ['deploy-everything'] }] },
      { approvals: { operations: ['*'], required: 1, approvers: ['role:owner'] } },
      { promotion: { from: 'acme-staging', minHealthy: '31d' } },
      { surprise: true },
    ]) {
      expect(TenantPolicy.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
    expect(parseApprover('group:sre')).toEqual({ kind: 'group', group: 'sre' });
    // The identity grammar's member references: people by user id, role:admin only, never a CI identity.
    expect(parseApprover('jane@example.com')).toEqual({ kind: 'user', userId: 'jane@example.com' });
    expect(parseApprover('role:admin')).toEqual({ kind: 'role', role: 'admin' });
    for (const bad of ['role:member', 'github-actions:acme/web', 'root:x', 'a b', 'group:']) expect(parseApprover(bad), bad).toBeUndefined();
    expect(durationMs('1h30m')).toBe(5_400_000);
  });

  it('finds the window active at an instant and says when it ends, in its time zone and UTC', () => {
    const policy = TenantPolicy.parse({
      freezeWindows: [{ name: 'weekend', schedule: '0 18 * * 5', duration: '63h', timeZone: 'Europe/Berlin', operations: ['*'], reason: 'no one on call' }],
    });
    // Saturday 2026-11-28 12:00 UTC is inside Friday 18:00 Berlin + 63 h (until Monday 09:00 Berlin = 08:00 UTC).
    const freeze = activeFreeze(policy, 'deploy-service', new Date('2026-11-28T12:00:00Z'))!;
    expect(freeze.endsAt.toISOString()).toBe('2026-11-30T08:00:00.000Z');
    expect(describeFreeze(freeze, 'deploy-service', 'acme')).toContain('until 2026-11-30 09:00 Europe/Berlin (2026-11-30T08:00:00Z)');
    expect(activeFreeze(policy, 'deploy-service', new Date('2026-11-26T12:00:00Z'))).toBeUndefined();
  });
});

describe('tenant policy and events through invoke()', () => {
  it('lets members read {}, tenant admins write, and records each change as an event but never in the audit trail', async () => {
    const { call, audit } = await setUp();
    const before = await audit();
    expect(await call('platform_get_tenant_policy', { name: 'acme' }, who('dave'))).toEqual({ team: 'acme', policy: {} });
    await expect(call('platform_set_tenant_policy', { name: 'acme', policy: { freezeWindows: [ALWAYS] } }, who('carol'))).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(call('platform_get_tenant_policy', { name: 'acme' }, who('mallory'))).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(call('platform_set_tenant_policy', { name: 'acme', policy: { freezeWindows: [{ ...ALWAYS, schedule: 'nope' }] } }, who('alice'))).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    expect(await call('platform_set_tenant_policy', { name: 'acme', policy: { freezeWindows: [ALWAYS] } }, who('alice'))).toMatchObject({ warnings: [] });
    // Approvals and promotion are enforced (issue 20 items 2 and 4): no warning for either.
    const enforced = { approvals: { operations: ['deploy-service'], required: 1, approvers: ['group:sre'] }, promotion: { from: 'acme-staging', minHealthy: '30m' } };
    expect(await call('platform_set_tenant_policy', { name: 'acme', policy: enforced }, who('alice'))).toMatchObject({ warnings: [] });
    await call('platform_set_tenant_policy', { name: 'acme', policy: {} }, who('root', 'self-issued', true));
    const events = (await call('platform_list_tenant_events', { name: 'acme' }, who('dave'))) as { items: Array<{ userId: string; type: string; data: unknown }> };
    expect(events.items.map((e) => [e.type, e.userId])).toEqual([['policy.changed', 'root'], ['policy.changed', 'alice'], ['policy.changed', 'alice']]);
    expect(events.items[2]!.data).toMatchObject({ old: {}, new: { freezeWindows: [{ name: 'always' }] } });
    expect(events.items[1]!.data).toMatchObject({ old: { freezeWindows: [{ name: 'always' }] }, new: { approvals: { expiresAfter: '24h' } } });
    expect(await call('platform_list_tenant_events', { name: 'acme', limit: '1' }, who('dave'))).toMatchObject({ count: 1 });
    expect(await audit()).toEqual(before);
  });

  it('refuses a frozen operation before anything is recorded, naming the window and its end; other operations pass', async () => {
    const { platform, call, audit } = await setUp();
    await call('platform_set_tenant_policy', { name: 'acme', policy: { freezeWindows: [ALWAYS] } }, who('alice'));
    const before = await audit();
    const refused = call('platform_rollback_service', ROLLBACK, who('carol'));
    await expect(refused).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(refused).rejects.toThrow(/frozen in acme by window "always" \(release freeze\) until .* Europe\/Berlin \(.*Z\)/);
    expect(await audit()).toEqual(before);
    expect(await platform.workflows.list({ visible: 'all', operation: 'rollback-service', limit: 10 })).toEqual([]);
    // provision-database is not covered by the window.
    await expect(call('platform_provision_database', { team_name: 'acme', component_name: 'web', engine: 'postgres' }, who('carol'))).resolves.toMatchObject({ status: 'submitted' });
  });

  it('lets a tenant admin signed in as a person override with a reason: audited, and an event', async () => {
    const { call, audit } = await setUp();
    await call('platform_set_tenant_policy', { name: 'acme', policy: { freezeWindows: [ALWAYS] } }, who('alice'));
    const override = { ...ROLLBACK, override_reason: 'hotfix for incident 42' };
    const before = await audit();
    // A member may not override; nor may an admin holding a PAT (it may sit in CI); nothing is recorded for either.
    await expect(call('platform_rollback_service', override, who('carol'))).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(call('platform_rollback_service', override, who('alice', 'pat'))).rejects.toThrow(/personal access token/);
    await expect(call('platform_rollback_service', override, who('github-actions:acme/web'))).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(await audit()).toEqual(before);

    const result = (await call('platform_rollback_service', override, who('alice'))) as { workflowName: string; status: string };
    expect(result.status).toBe('submitted');
    const entry = (await audit()).find((e) => e.workflowName === result.workflowName)!;
    expect(entry.parameters).toMatchObject({ target_tag: '0.1.0', override_reason: 'hotfix for incident 42' });
    expect(entry.riskLevel).toBe('medium');
    const events = (await call('platform_list_tenant_events', { name: 'acme' }, who('dave'))) as { items: Array<{ type: string; userId: string; data: Record<string, unknown> }> };
    expect(events.items[0]).toMatchObject({
      type: 'freeze.overridden',
      userId: 'alice',
      data: { workflowName: result.workflowName, operation: 'rollback-service', window: 'always', reason: 'hotfix for incident 42' },
    });
  });

  it('ignores override_reason when no window is active and records nothing extra', async () => {
    const { call, audit } = await setUp();
    const result = (await call('platform_rollback_service', { ...ROLLBACK, override_reason: 'just in case' }, who('carol'))) as { workflowName: string };
    const entry = (await audit()).find((e) => e.workflowName === result.workflowName)!;
    expect(entry.parameters).not.toHaveProperty('override_reason');
    expect(await call('platform_list_tenant_events', { name: 'acme' }, who('dave'))).toMatchObject({ count: 0 });
  });
});
