/**
 * `pds webhooks get|set|deliveries` as a real process against a real pds (issue 20 item 5): a tenant admin sets hooks
 * from YAML and sees the new secret once, a member lists them without it, a non-admin is refused, and the deliveries
 * to a receiver on 127.0.0.1 are listed.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { executeAndWait, startTestServer, type TestServer } from '../helpers/server.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

let pds: TestServer;
let home: string;
let receiver: Receiver;

const run = (args: string[], user: string) => runCli(pds, home, args, { user });

beforeAll(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'pds-cli-webhooks-'));
  receiver = await startReceiver();
  pds = await startTestServer({ PDS_OUTBOUND_ALLOW_PRIVATE: 'true', PDS_WEBHOOK_BACKOFF_MS: '50' });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice', viewers: 'dave' });
}, 60_000);

afterAll(async () => {
  await pds?.stop();
  await receiver?.close();
  await rm(home, { recursive: true, force: true });
});

describe('pds webhooks', () => {
  it('sets hooks from YAML (secret shown once), lists them without secrets, and lists deliveries', async () => {
    const file = path.join(home, 'hooks.yaml');
    await writeFile(file, `hooks:\n  - url: ${receiver.url}/hook\n    events: [policy.changed]\n`);
    expect((await run(['webhooks', 'set', 'acme', '-f', file], 'dave')).code).not.toBe(0);
    const set = await run(['webhooks', 'set', 'acme', '-f', file, '-o', 'json'], 'alice');
    expect(set.code, set.stderr).toBe(0);
    const [hook] = JSON.parse(set.stdout);
    expect(hook).toMatchObject({ id: expect.stringMatching(/^wh_/), events: ['policy.changed'], format: 'json' });
    expect(set.stderr).toContain(`Secret of new hook ${hook.id}`);
    expect(set.stderr).toContain(hook.secret);

    const table = await run(['webhooks', 'get', 'acme', '-o', 'table'], 'dave');
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`${hook.id}\\s+json\\s+policy\\.changed\\s+${receiver.url}/hook`));
    expect(table.stdout + (await run(['webhooks', 'get', 'acme', '-o', 'json'], 'dave')).stdout).not.toContain(hook.secret);

    receiver.secret('/hook', hook.secret);
    expect((await pds.api('alice', 'PUT', '/api/v1/tenants/acme/policy', {})).status).toBe(200);
    await receiver.until('the policy.changed delivery', (all) => all.some((g) => g.signed && g.headers['x-pds-event'] === 'policy.changed'));
    const deadline = Date.now() + 20_000;
    for (;;) {
      const list = await run(['webhooks', 'deliveries', 'acme', '-o', 'table'], 'dave');
      expect(list.code, list.stderr).toBe(0);
      if (/policy\.changed\s+\S+\s+1\s+200\s+delivered/.test(list.stdout)) break;
      if (Date.now() > deadline) throw new Error(`no delivered row in:\n${list.stdout}`);
    }
  });
});
