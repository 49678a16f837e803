/**
 * Webhooks under two real `pds serve` processes on one PostgreSQL (issue 20 item 5): both dispatch the same outbox,
 * and the receiver on 127.0.0.1 still sees each delivery attempted in turn — the first attempt of each answered 500,
 * the retry accepted — and exactly one accepted delivery per event, each signed with the hook's secret.
 */
import { describe, expect, it } from 'vitest';
import { startPds, settledOver, type PdsProcess } from '../helpers/pds-process.js';
import { startReceiver, type Received } from '../helpers/webhook-receiver.js';
import { afterThisTest, tempDir, testLocation } from '../sql/helpers.js';

const ENV = { PDS_OUTBOUND_ALLOW_PRIVATE: 'true', PDS_WEBHOOK_BACKOFF_MS: '100' };

async function pdsOn(dataDir: string, databaseUrl: string): Promise<PdsProcess> {
  const pds = await startPds({ dataDir, databaseUrl, stepMs: 20, env: ENV });
  afterThisTest(() => pds.kill9());
  return pds;
}

const onboard = (app: string) => ({ action: 'onboard', team_name: 'acme', component_name: app, dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080', service_template: 'default' });
// Each policy change is an event; its window must never cover the deploys below. A fixed '0 18 * * 5' failed them every
// Friday 18:00–19:00 UTC, so the window opens daily twelve hours from when the suite is loaded, for an hour.
const quietHour = (new Date().getUTCHours() + 12) % 24;
const policy = (i: number) => ({
  freezeWindows: [{ name: `w${i}`, schedule: `0 ${quietHour} * * *`, duration: '1h', timeZone: 'UTC', operations: ['deploy-service'], reason: `reason ${i}` }],
});

describe('webhooks from two pds processes on one PostgreSQL', () => {
  it('deliver each event once: every delivery is attempted by one process at a time, retried once, accepted once', async () => {
    // The first attempt of each delivery fails, so retries (claimed by either process) race too.
    const seen = new Set<string>();
    const r = await startReceiver((_n, _path, headers) => {
      const id = String(headers['x-pds-delivery']);
      if (seen.has(id)) return { status: 200 };
      seen.add(id);
      return { status: 500 };
    });
    afterThisTest(() => r.close());

    const location = await testLocation('postgres');
    const a = await pdsOn(location.dataDir, location.databaseUrl!);
    const b = await pdsOn(await tempDir(), location.databaseUrl!);
    const created = await a.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'acme', admins: 'alice', viewers: 'dave' });
    expect(created.status).toBe(200);
    await settledOver(a, 'root', created.body.workflowName);
    expect((await b.api('alice', 'POST', '/api/v1/repos/grant-access', { team_name: 'acme', repo: 'acme/web' })).status).toBe(200);
    expect((await a.api('alice', 'POST', '/api/v1/repos/sync', { team: 'acme' })).status).toBe(200);

    const set = await a.api('alice', 'PUT', '/api/v1/tenants/acme/webhooks', {
      hooks: [{ url: `${r.url}/hook`, events: ['policy.changed', 'workflow.submitted', 'workflow.succeeded'] }],
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    r.secret('/hook', set.body.hooks[0].secret);
    // A member of the tenant reads the hooks through the other process, without the secret.
    const read = await b.api('dave', 'GET', '/api/v1/tenants/acme/webhooks');
    expect(read.body.hooks).toEqual([expect.objectContaining({ id: set.body.hooks[0].id })]);
    expect(JSON.stringify(read.body)).not.toContain(set.body.hooks[0].secret);

    const events: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await [a, b][i % 2]!.api('alice', 'PUT', '/api/v1/tenants/acme/policy', policy(i));
      expect(res.status).toBe(200);
      events.push(res.body.event.id);
    }
    const workflows: string[] = [];
    for (const [i, p] of [a, b].entries()) {
      const res = await p.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', onboard(`svc${i}`));
      expect(res.status).toBe(200);
      workflows.push(res.body.workflowName);
    }
    for (const name of workflows) expect((await settledOver(a, 'alice', name)).audit.status).toBe('succeeded');
    const expected = events.length + workflows.length * 2;

    const accepted = (all: Received[]) => all.filter((g) => g.status === 200);
    await r.until(`${expected} accepted deliveries`, (all) => accepted(all).length >= expected, 60_000);
    // Settled in the store: nothing pending, so no attempt can still be on its way.
    const deadline = Date.now() + 30_000;
    let listed: any[] = [];
    for (;;) {
      listed = (await b.api('dave', 'GET', '/api/v1/tenants/acme/webhooks/deliveries?limit=200')).body.items;
      if (listed.length === expected && listed.every((d) => d.outcome === 'delivered')) break;
      if (Date.now() > deadline) throw new Error(`deliveries did not all settle: ${JSON.stringify(listed)}`);
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(listed.every((d) => d.attempts === 2 && d.lastStatusCode === 200)).toBe(true);

    const byDelivery = new Map<string, number[]>();
    for (const g of r.received) byDelivery.set(String(g.headers['x-pds-delivery']), [...(byDelivery.get(String(g.headers['x-pds-delivery'])) ?? []), g.status]);
    expect(byDelivery.size).toBe(expected);
    for (const statuses of byDelivery.values()) expect(statuses).toEqual([500, 200]);
    const eventIds = accepted(r.received).map((g) => g.json.id);
    expect(new Set(eventIds).size).toBe(expected);
    for (const id of events) expect(eventIds).toContain(id);
    const workflowEvents = accepted(r.received).filter((g) => String(g.headers['x-pds-event']).startsWith('workflow.'));
    expect(workflowEvents.map((g) => `${g.json.data.workflowName} ${g.headers['x-pds-event']}`).sort()).toEqual(
      workflows.flatMap((w) => [`${w} workflow.submitted`, `${w} workflow.succeeded`]).sort(),
    );
    expect(r.received.every((g) => g.signed)).toBe(true);
  });
});
