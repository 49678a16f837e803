import { describe, expect, it } from 'vitest';
import { memoryOnceStore } from '../../adapters/memory/once.js';
import type { AuditEntry } from '../../core/model.js';
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
  it('returns the most recent visible entries, newest first, and keeps them across a restart', async () => {
    const dir = await tempDir();
    const first = await openSandbox(dir);
    await first.audit.append(entry(1, '2026-01-01T00:00:01Z'));
    await first.audit.append(entry(2, '2026-01-01T00:00:03Z', 'bob'));
    await first.audit.append(entry(3, '2026-01-01T00:00:02Z'));
    await first.audit.append(entry(4, '2026-01-01T00:00:04Z'));
    await expect(first.audit.append(entry(4, '2026-01-01T00:00:05Z'))).rejects.toMatchObject({ code: 'CONFLICT' });
    await first.audit.settle('wf-1', 'failed', 'boom');
    await first.audit.settle('wf-unknown', 'failed', 'ignored');
    await first.close();

    const second = await openSandbox(dir);
    const ids = (limit: number, visible: (e: AuditEntry) => boolean) => second.audit.recent(limit, visible).then((l) => l.map((e) => e.id));
    expect(await ids(10, () => true)).toEqual(['4', '2', '3', '1']);
    expect(await ids(2, (e) => e.userId === 'alice')).toEqual(['4', '3']);
    expect(await second.audit.get('wf-1')).toMatchObject({ status: 'failed', message: 'boom' });
    expect(await second.audit.get('wf-unknown')).toBeUndefined();
  });
});

describe('sandbox code host', () => {
  it('treats asking for the grant URL as installing the app, so the next sync registers the repository once', async () => {
    const dir = await tempDir();
    const platform = await openSandbox(dir);
    await run(platform, 'create-tenant', { team_name: 'acme' });
    await run(platform, 'create-tenant', { team_name: 'beta' });
    expect(await platform.codeHost.listRepositories('acme')).toEqual([]);

    const { url } = await platform.codeHost.grantAccessUrl('acme', 'acme-org/web');
    expect(url).toBe('https://github.com/apps/pds-test/installations/new?state=acme%3Aacme-org%2Fweb');
    await platform.codeHost.grantAccessUrl('acme', 'acme-org/api');
    await platform.codeHost.grantAccessUrl('acme', 'acme-org/web');

    const synced = await platform.codeHost.syncRepositories('acme', 'alice');
    expect(synced.added).toEqual(['acme-org/api', 'acme-org/web']);
    expect(synced.repositories.map((r) => r.fullName)).toEqual(['acme-org/api', 'acme-org/web']);
    expect(synced.repositories[1]).toMatchObject({ defaultBranch: 'main', url: 'https://github.com/acme-org/web' });
    expect(await platform.codeHost.syncRepositories('acme', 'alice')).toMatchObject({ added: [] });
    expect(await platform.codeHost.syncRepositories('beta', 'alice')).toEqual({ repositories: [], added: [] });
    await platform.close();

    const again = await openSandbox(dir);
    expect((await again.codeHost.listRepositories('acme')).map((r) => r.fullName)).toEqual(['acme-org/api', 'acme-org/web']);
    await expect(again.codeHost.listRepositories('nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(again.codeHost.grantAccessUrl('acme', 'not a repo')).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    await expect(again.codeHost.readTree('acme-org/web')).rejects.toMatchObject({
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
