import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { memoryOnceStore } from '../../adapters/memory/once.js';
import type { AuditEntry } from '../../core/model.js';
import type { AuditQuery } from '../../core/ports.js';
import { execute, openSandbox, run, tempDir } from './helpers.js';

function entry(n: number, timestamp: string, userId = 'alice'): AuditEntry {
  return {
    id: String(n),
    timestamp,
    userId,
    operation: 'create-tenant',
    parameters: { team_name: `t${n}` },
    workflowName: `wf-${n}`,
    status: 'submitted',
    riskLevel: 'medium',
    message: '',
  };
}

describe('sandbox audit store', () => {
  it('answers queries newest first (submission order), by visibility and filters, and keeps entries across a restart', async () => {
    const dir = await tempDir();
    const first = await openSandbox(dir);
    await first.audit.append(entry(1, '2026-01-01T00:00:01Z'), {});
    await first.audit.append(entry(2, '2026-01-01T00:00:03Z', 'bob'), {});
    await first.audit.append(entry(3, '2026-01-01T00:00:02Z'), { tenantUid: 'uid-t3' });
    await first.audit.append(entry(4, '2026-01-01T00:00:04Z'), {});
    await expect(first.audit.append(entry(4, '2026-01-01T00:00:05Z'), {})).rejects.toMatchObject({ code: 'CONFLICT' });
    await first.audit.settle('wf-1', 'failed', 'boom');
    await first.audit.settle('wf-unknown', 'failed', 'ignored');
    await first.close();

    const second = await openSandbox(dir);
    const ids = (query: AuditQuery) => second.audit.query(query).then((l) => l.map((e) => e.id));
    expect(await ids({ visible: 'all', limit: 10 })).toEqual(['4', '3', '2', '1']);
    expect(await ids({ visible: 'all', limit: 10, tenant: 't2' })).toEqual(['2']);
    expect(await ids({ visible: 'all', limit: 10, userId: 'alice' })).toEqual(['4', '3', '1']);
    expect(await ids({ visible: 'all', limit: 0 })).toEqual([]);
    // bob sees his own entry and those of the tenant identity he belongs to, not another tenant of the same name.
    expect(await ids({ visible: { userId: 'bob', tenants: [{ name: 't3', uid: 'uid-t3' }] }, limit: 10 })).toEqual(['3', '2']);
    expect(await ids({ visible: { userId: 'bob', tenants: [{ name: 't3', uid: 'uid-other' }] }, limit: 10 })).toEqual(['2']);
    expect(await ids({ visible: { userId: 'bob', tenants: [{ name: 't3', uid: 'uid-t3' }] }, limit: 1 })).toEqual(['3']);
    expect(await second.audit.get('wf-1')).toMatchObject({ status: 'failed', message: 'boom' });
    expect(await second.audit.get('wf-3')).toMatchObject({ tenantUid: 'uid-t3' });
    expect(await second.audit.get('wf-unknown')).toBeUndefined();
  });

  it("gives a re-created tenant a new uid, so its members do not see the old tenant's entries or workflows", async () => {
    const platform = await openSandbox(await tempDir(), { stepMs: 0 });
    await run(platform, 'create-tenant', { team_name: 'acme', admins: 'old-admin' }, 'root');
    const old = await platform.backend.getTenantRef('acme');
    await run(platform, 'delete-tenant', { team_name: 'acme' }, 'root');
    expect(await platform.backend.getTenantRef('acme')).toBeUndefined();
    await run(platform, 'create-tenant', { team_name: 'acme', admins: 'new-admin' }, 'root');
    const renewed = await platform.backend.getTenantRef('acme');
    expect(renewed!.uid).not.toBe(old!.uid);

    const visible = { userId: 'new-admin', tenants: [renewed!] };
    const audit = await platform.audit.query({ visible, limit: 50 });
    expect(audit.map((e) => [e.operation, e.tenantUid])).toEqual([['create-tenant', renewed!.uid]]);
    const workflows = await platform.workflows.list({ visible, limit: 50 });
    expect(workflows.map((w) => [w.operation, w.tenantUid, w.team])).toEqual([['create-tenant', renewed!.uid, 'acme']]);
    const everything = await platform.workflows.list({ visible: 'all', limit: 50, tenant: 'acme' });
    expect(everything.map((w) => w.tenantUid)).toEqual([renewed!.uid, old!.uid, old!.uid]);
    expect(await platform.workflows.list({ visible: 'all', limit: 50, operation: 'delete-tenant' })).toHaveLength(1);
  });
});

describe('sandbox readiness', () => {
  it('is ready only while it can write, and not once shutting down (the shutdown signal fires)', async () => {
    const dir = await tempDir();
    const platform = await openSandbox(dir, { busyTimeoutMs: 100 });
    expect(await platform.ready()).toBe(true);
    // Another process holding the database's write lock: nothing can be written, as with an unwritable disk.
    const other = new BetterSqlite3(path.join(dir, 'pds.db'));
    other.exec('begin immediate');
    expect(await platform.ready()).toBe(false);
    other.exec('rollback');
    other.close();
    expect(await platform.ready()).toBe(true);
    expect(platform.shutdown.aborted).toBe(false);
    const closing = platform.close();
    expect(platform.shutdown.aborted).toBe(true);
    expect(await platform.ready()).toBe(false);
    await closing;
  });
});

describe('sandbox code host', () => {
  it('treats asking for the grant URL as installing the app, so the next sync registers the repository once (the login may push to its own account)', async () => {
    const dir = await tempDir();
    const platform = await openSandbox(dir);
    await run(platform, 'create-tenant', { team_name: 'acme' });
    await run(platform, 'create-tenant', { team_name: 'beta' });
    expect(await platform.codeHost.listRepositories('acme')).toEqual([]);

    const { url } = await platform.codeHost.grantAccessUrl('acme', 'alice/web');
    expect(url).toBe('https://github.com/apps/pds-test/installations/new?state=acme%3Aalice%2Fweb');
    await platform.codeHost.grantAccessUrl('acme', 'alice/api');
    await platform.codeHost.grantAccessUrl('acme', 'alice/web');

    const synced = await platform.codeHost.syncRepositories('acme', 'alice');
    expect(synced.added).toEqual(['alice/api', 'alice/web']);
    expect(synced.repositories.map((r) => r.fullName)).toEqual(['alice/api', 'alice/web']);
    expect(synced.repositories[1]).toMatchObject({ defaultBranch: 'main', url: 'https://github.com/alice/web' });
    expect(await platform.codeHost.syncRepositories('acme', 'alice')).toMatchObject({ added: [] });
    expect(await platform.codeHost.syncRepositories('beta', 'alice')).toEqual({ repositories: [], added: [], refused: [] });
    await platform.close();

    const again = await openSandbox(dir);
    expect((await again.codeHost.listRepositories('acme')).map((r) => r.fullName)).toEqual(['alice/api', 'alice/web']);
    await expect(again.codeHost.listRepositories('nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(again.codeHost.grantAccessUrl('acme', 'not a repo')).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    await expect(again.codeHost.readTree('alice/web')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringMatching(/sandbox cannot read code-host repositories.*pass the repository's file list/),
    });
  });
});

describe('once stores', () => {
  it('memory: claims once until the TTL passes', async () => {
    let clock = 0;
    const once = memoryOnceStore(() => clock);
    expect(await once.claim('a', 10)).toBe(true);
    expect(await once.claim('a', 10)).toBe(false);
    expect(await once.claim('b', 10)).toBe(true);
    clock += 10_000;
    expect(await once.claim('a', 10)).toBe(true);
    await expect(once.claim('c', 0)).rejects.toThrow(RangeError);
  });

  it('sandbox: a claim survives a restart and expires with its TTL', async () => {
    const dir = await tempDir();
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const now = () => new Date(clock);
    const first = await openSandbox(dir, { now });
    expect(await first.once.claim('confirm:abc', 60)).toBe(true);
    expect(await first.once.claim('__proto__', 60)).toBe(true);
    expect(await first.once.claim('__proto__', 60)).toBe(false);
    await first.close();

    const second = await openSandbox(dir, { now });
    expect(await second.once.claim('confirm:abc', 60)).toBe(false);
    clock += 60_000;
    expect(await second.once.claim('confirm:abc', 60)).toBe(true);
  });
});

describe('platform lifecycle', () => {
  it('is ready once loaded, refuses submissions after close, and closes idempotently', async () => {
    const platform = await openSandbox(await tempDir());
    expect(platform.kind).toBe('sandbox');
    expect(await platform.ready()).toBe(true);
    await Promise.all([platform.close(), platform.close()]);
    expect(await platform.ready()).toBe(false);
    await expect(execute(platform, 'create-tenant', { team_name: 'acme' })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });
});
