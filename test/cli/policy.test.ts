/**
 * `pds policy get|set|events` as a real process against a real pds (issue 20): a tenant admin sets a policy from a YAML
 * file, a member reads it back, an invalid document is refused with the server's message, and the change is in the feed.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { executeAndWait, registerRepository, startTestServer, type TestServer } from '../helpers/server.js';

let pds: TestServer;
let home: string;

const run = (args: string[], user: string, stdin = '') => runCli(pds, home, args, { user, stdin });

beforeAll(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'pds-cli-policy-'));
  pds = await startTestServer();
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice', viewers: 'dave' });
}, 60_000);

afterAll(async () => {
  await pds?.stop();
  await rm(home, { recursive: true, force: true });
});

describe('pds policy', () => {
  it('sets a policy from YAML, reads it back in every format, and shows the change in the feed', async () => {
    const file = path.join(home, 'policy.yaml');
    await writeFile(
      file,
      'freezeWindows:\n  - name: weekend\n    schedule: "0 18 * * 5"\n    duration: 63h\n    timeZone: Europe/Berlin\n' +
        '    operations: [deploy-service]\n    reason: no one on call\n',
    );
    const set = await run(['policy', 'set', 'acme', '-f', file, '-o', 'json'], 'alice');
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ freezeWindows: [{ name: 'weekend', timeZone: 'Europe/Berlin' }] });

    const table = await run(['policy', 'get', 'acme', '-o', 'table'], 'dave');
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/freeze weekend.*deploy-service: "0 18 \* \* 5" for 63h \(Europe\/Berlin\)/);
    const yaml = await run(['policy', 'get', 'acme', '-o', 'yaml'], 'dave');
    expect(yaml.stdout).toContain('schedule: 0 18 * * 5');

    const events = await run(['policy', 'events', 'acme', '-o', 'json'], 'dave');
    expect(JSON.parse(events.stdout)).toMatchObject({ count: 1, items: [{ type: 'policy.changed', userId: 'alice' }] });
  });

  it('refuses an invalid document and a member who is not an admin, with the server\'s message', async () => {
    const bad = await run(['policy', 'set', 'acme', '-f', '-'], 'alice', '{"freezeWindows":[{"schedule":"soon","duration":"1h","operations":["*"],"reason":"x"}]}');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/schedule/);
    const viewer = await run(['policy', 'set', 'acme', '-f', '-'], 'dave', '{}');
    expect(viewer.code).toBe(1);
    expect(viewer.stderr).toMatch(/access denied/);
  });

  it('deploys during a freeze window only with --override-reason from a tenant admin, and the override is in the feed', async () => {
    await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'frozen', admins: 'alice', members: 'bob' });
    await registerRepository(pds, 'alice', 'frozen', 'frozen/web');
    await executeAndWait(pds, 'alice', 'deploy-service', { action: 'onboard', team_name: 'frozen', component_name: 'web', dockerfile_repo: 'frozen/web', git_tag: '0.1.0', port: '8080' });
    // Every minute starts a two-minute window: always active.
    const always = '{"freezeWindows":[{"name":"always","schedule":"* * * * *","duration":"2m","operations":["*"],"reason":"release freeze"}]}';
    expect((await run(['policy', 'set', 'frozen', '-f', '-'], 'alice', always)).code).toBe(0);

    const refused = await run(['deploy', 'frozen/web', '--tag', '0.1.1'], 'bob');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/frozen in frozen by window "always" \(release freeze\)/);
    const member = await run(['deploy', 'frozen/web', '--tag', '0.1.1', '--override-reason', 'incident 42'], 'bob');
    expect(member.code).toBe(1);
    expect(member.stderr).toMatch(/Only the tenant's admins and platform admins may override/);

    const overridden = await run(['rollback', 'frozen/web', '--to', '0.1.0', '--override-reason', 'incident 42', '--wait'], 'alice');
    expect(overridden.code, overridden.stderr).toBe(0);
    const events = await pds.api('alice', 'GET', '/api/v1/tenants/frozen/events');
    expect(events.body.items[0]).toMatchObject({ type: 'freeze.overridden', userId: 'alice', data: { operation: 'rollback-service', reason: 'incident 42' } });
  });
});
