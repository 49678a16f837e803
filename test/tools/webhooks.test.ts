/**
 * Webhooks through invoke() on the real sandbox, delivered by its dispatcher to a real receiver on 127.0.0.1 (issue 20
 * item 5): who may read and change hooks, secrets shown once and never again, the outbound rule at set time, signed
 * deliveries retried until accepted, no redirect followed, the Slack shape, workflow events, giving up.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { TenantPolicy } from '../../core/governance/policy.js';
import { deliveryBody, shownUrl } from '../../core/governance/webhooks.js';
import type { Platform } from '../../core/ports.js';
import type { Identity } from '../../auth/identity.js';
import type { SandboxOptions } from '../../adapters/sandbox/index.js';
import { invoke, type InvokeDeps } from '../../tools/invoke.js';
import { allTools } from '../../tools/registry.js';
import { startReceiver, verifySignature, type Receiver, type Script } from '../helpers/webhook-receiver.js';
import { execute, ONBOARD, openSandbox, run, settled, tempDir } from '../sandbox/helpers.js';

const who = (userId: string, admin = false): Identity => ({ userId, groups: [], admin, tokenKind: 'self-issued' });
const tool = (name: string) => allTools.find((t) => t.name === name)!;

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function receiver(script?: Script): Promise<Receiver> {
  const r = await startReceiver(script);
  receivers.push(r);
  return r;
}

async function setUp(webhooks: SandboxOptions['webhooks'] = { allowPrivate: true, backoffMs: 50 }) {
  const platform: Platform = await openSandbox(await tempDir(), { stepMs: 0, webhooks });
  await run(platform, 'create-tenant', { team_name: 'acme', admins: 'alice', members: 'carol', viewers: 'dave' });
  const deps: InvokeDeps = { platform, config: loadConfig({ PDS_DOMAIN: 'apps.test' }), confirmSecret: new TextEncoder().encode('x'.repeat(32)) };
  const call = (name: string, input: unknown, as: Identity = who('alice')) => invoke(tool(name), input, as, deps) as Promise<any>;
  /** Poll the deliveries list until `predicate` holds for it, or fail after `timeoutMs`. */
  const deliveriesUntil = async (what: string, predicate: (items: any[]) => boolean, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { items } = await call('platform_list_webhook_deliveries', { name: 'acme' }, who('dave'));
      if (predicate(items)) return items;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(items)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  return { platform, call, deliveriesUntil };
}

const POLICY = { freezeWindows: [{ name: 'weekend', schedule: '0 18 * * 5', duration: '63h', operations: ['deploy-service'], reason: 'no one on call' }] };

describe('webhooks through invoke()', () => {
  it('shows a new hook\'s secret once; members read hooks without it; only tenant admins change them; a change is an event', async () => {
    const { call } = await setUp();
    const hooks = [{ url: 'http://127.0.0.1:9/hook?token=abc', events: ['policy.changed'] }];
    await expect(call('platform_set_tenant_webhooks', { name: 'acme', hooks }, who('carol'))).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(call('platform_get_tenant_webhooks', { name: 'acme' }, who('mallory'))).rejects.toMatchObject({ code: 'FORBIDDEN' });

    const created = await call('platform_set_tenant_webhooks', { name: 'acme', hooks });
    const hook = created.hooks[0];
    expect(hook).toMatchObject({ id: expect.stringMatching(/^wh_[0-9a-f]{16}$/), format: 'json', events: ['policy.changed'], createdBy: 'alice' });
    expect(hook.secret).toMatch(/^pdswh_[A-Za-z0-9_-]{43}$/);
    expect(hook.url).toBe('http://127.0.0.1:9/hook?…');

    const read = await call('platform_get_tenant_webhooks', { name: 'acme' }, who('dave'));
    expect(read.hooks).toEqual([{ ...hook, secret: undefined }].map(({ secret: _s, ...h }) => h));
    expect(JSON.stringify(read)).not.toContain(hook.secret);

    // Kept by id (URL as GET shows it = unchanged): same secret, not shown again; a platform admin may change hooks.
    const kept = await call('platform_set_tenant_webhooks', { name: 'acme', hooks: [{ id: hook.id, url: hook.url, events: ['policy.changed', 'workflow.failed'] }] }, who('root', true));
    expect(kept.hooks).toEqual([expect.objectContaining({ id: hook.id, events: ['policy.changed', 'workflow.failed'] })]);
    expect(kept.hooks[0].secret).toBeUndefined();
    await expect(call('platform_set_tenant_webhooks', { name: 'acme', hooks: [{ id: 'wh_0000000000000000', events: ['policy.changed'] }] })).rejects.toMatchObject({
      code: 'INVALID_PARAMS',
    });

    const events = await call('platform_list_tenant_events', { name: 'acme' }, who('dave'));
    expect(events.items.map((e: any) => [e.type, e.userId])).toEqual([['webhooks.changed', 'root'], ['webhooks.changed', 'alice']]);
    expect(events.items[1].data).toEqual({ old: [], new: read.hooks });
    expect(JSON.stringify(events)).not.toContain(hook.secret);
    expect(JSON.stringify(events)).not.toContain('token=abc');
  });

  it('refuses http and non-public URLs without PDS_OUTBOUND_ALLOW_PRIVATE', async () => {
    const { call } = await setUp({ allowPrivate: false, backoffMs: 50 });
    for (const url of ['https://127.0.0.1/hook', 'https://[::1]/hook', 'https://10.1.2.3/hook', 'https://localhost/hook', 'http://93.184.215.14/hook', 'https://u:p@93.184.215.14/']) {
      await expect(call('platform_set_tenant_webhooks', { name: 'acme', hooks: [{ url, events: ['policy.changed'] }] }), url).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    }
    await expect(call('platform_set_tenant_webhooks', { name: 'acme', hooks: [{ url: 'https://127.0.0.1/hook', events: ['policy.changed'] }] })).rejects.toThrow(
      /public addresses: 127\.0\.0\.1 is loopback .*PDS_OUTBOUND_ALLOW_PRIVATE=true/,
    );
    expect((await call('platform_get_tenant_webhooks', { name: 'acme' })).hooks).toEqual([]);
    // A public address over https is accepted (an IP literal: no name to resolve).
    const ok = await call('platform_set_tenant_webhooks', { name: 'acme', hooks: [{ url: 'https://93.184.215.14/hook', events: ['policy.changed'] }] });
    expect(ok.hooks).toEqual([expect.objectContaining({ url: 'https://93.184.215.14/hook' })]);
  });

  it('delivers a signed event, retries after two 500s, and lists the delivery with its attempts', async () => {
    const r = await receiver((n) => ({ status: n <= 2 ? 500 : 204 }));
    const { call, deliveriesUntil } = await setUp();
    const { hooks } = await call('platform_set_tenant_webhooks', { name: 'acme', hooks: [{ url: `${r.url}/hook`, events: ['policy.changed'] }] });
    r.secret('/hook', hooks[0].secret);
    const { event } = await call('platform_set_tenant_policy', { name: 'acme', policy: POLICY });

    const got = await r.until('three attempts', (all) => all.length >= 3);
    expect(got.map((g) => [g.status, g.signed])).toEqual([[500, true], [500, true], [204, true]]);
    const delivery = got[0]!.headers['x-pds-delivery'];
    expect(delivery).toMatch(/^[0-9a-f-]{36}$/);
    for (const g of got) {
      expect(g.headers).toMatchObject({ 'x-pds-event': 'policy.changed', 'x-pds-delivery': delivery, 'content-type': 'application/json' });
      expect(g.body).toBe(got[0]!.body);
    }
    // The body is the event as the feed shows it to a member.
    const feed = await call('platform_list_tenant_events', { name: 'acme' }, who('dave'));
    expect(got[0]!.json).toEqual(feed.items.find((e: any) => e.id === event.id));
    expect(verifySignature('not-the-secret', got[0]!.body, got[0]!.headers['x-pds-signature-256'] as string)).toBe(false);

    const [listed] = await deliveriesUntil('the delivery to be delivered', (items) => items[0]?.outcome === 'delivered');
    expect(listed).toMatchObject({ id: delivery, hookId: hooks[0].id, event: 'policy.changed', eventId: event.id, attempts: 3, lastStatusCode: 204, nextAttemptAt: null });
  });

  it('does not follow a redirect: a 3xx is a failed attempt, retried', async () => {
    const r = await receiver((_n, path) => (path === '/hook' ? { status: 302, headers: { location: '/elsewhere' } } : { status: 200 }));
    const { call, deliveriesUntil } = await setUp({ allowPrivate: true, backoffMs: 60_000 });
    await call('platform_set_tenant_webhooks', { name: 'acme', hooks: [{ url: `${r.url}/hook`, events: ['policy.changed'] }] });
    await call('platform_set_tenant_policy', { name: 'acme', policy: POLICY });
    const [listed] = await deliveriesUntil('a recorded attempt', (items) => items[0]?.attempts === 1);
    expect(listed).toMatchObject({ outcome: 'pending', lastStatusCode: 302, lastError: expect.stringMatching(/redirects are not followed/) });
    expect(Date.parse(listed.nextAttemptAt)).toBeGreaterThan(Date.now() + 30_000);
    expect(r.received.map((g) => g.path)).toEqual(['/hook']);
  });

  it('sends a Slack incoming-webhook message for format slack, its text escaped', async () => {
    const r = await receiver();
    const { call } = await setUp();
    const { hooks } = await call('platform_set_tenant_webhooks', {
      name: 'acme',
      hooks: [{ url: `${r.url}/services/T0/B0/KEY`, events: ['policy.changed'], format: 'slack' }],
    });
    expect(hooks[0].url).toBe(`${r.url}/…`);
    r.secret('/services/T0/B0/KEY', hooks[0].secret);
    await call('platform_set_tenant_policy', { name: 'acme', policy: POLICY });
    const [got] = await r.until('the Slack message', (all) => all.length >= 1);
    expect(got!.signed).toBe(true);
    expect(got!.json).toEqual({
      text: '[acme] alice changed the policy of acme',
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text: '*policy.changed* [acme] alice changed the policy of acme' } },
        { type: 'context', elements: [{ type: 'mrkdwn', text: expect.stringMatching(/Z · event [0-9a-f-]{36}$/) }] },
      ],
    });
    // Caller-chosen text cannot mention everyone or forge a link.
    const body = JSON.parse(
      deliveryBody(
        { id: 'e1', type: 'freeze.overridden', timestamp: 't', team: 'acme', userId: 'alice', data: { window: 'w', operation: 'deploy-service', workflowName: 'x', reason: '<!channel> <http://evil|click> & more' } },
        'slack',
      ),
    );
    expect(body.text).toContain('&lt;!channel&gt; &lt;http://evil|click&gt; &amp; more');
    expect(shownUrl('https://hooks.slack.com/services/T0/B0/XXXX', 'slack')).toBe('https://hooks.slack.com/…');
  });

  it('sends workflow.submitted, workflow.succeeded and workflow.failed, with secret parameters redacted', async () => {
    const r = await receiver();
    const { platform, call } = await setUp();
    const { hooks } = await call('platform_set_tenant_webhooks', {
      name: 'acme',
      hooks: [{ url: `${r.url}/wf`, events: ['workflow.submitted', 'workflow.succeeded', 'workflow.failed'] }],
    });
    r.secret('/wf', hooks[0].secret);
    const ok = (await run(platform, 'deploy-service', ONBOARD)).name;
    const config = (await run(platform, 'deploy-service', { action: 'update-config', team_name: 'acme', component_name: 'web', env_vars: 'API_KEY=s3cret' })).name;
    // Onboarding a service that is already onboarded fails in its first step.
    const failed = await settled(platform, await execute(platform, 'deploy-service', ONBOARD));
    expect(failed.phase).toBe('failed');

    const key = (g: any) => `${g.json.data.workflowName} ${g.headers['x-pds-event']}`;
    const expected = [`${ok} workflow.submitted`, `${ok} workflow.succeeded`, `${config} workflow.succeeded`, `${failed.name} workflow.submitted`, `${failed.name} workflow.failed`];
    const got = await r.until('the workflow events', (all) => expected.every((k) => all.some((g) => key(g) === k)));
    expect(got.every((g) => g.signed)).toBe(true);
    const done = got.find((g) => key(g) === `${ok} workflow.succeeded`)!.json;
    expect(done).toMatchObject({
      type: 'workflow.succeeded',
      team: 'acme',
      userId: 'alice',
      data: { workflowName: ok, operation: 'deploy-service', phase: 'succeeded', team: 'acme', service: 'web', parameters: { action: 'onboard', git_tag: '0.1.0' } },
    });
    expect(got.find((g) => key(g) === `${failed.name} workflow.failed`)!.json.data).toMatchObject({ phase: 'failed', message: expect.stringMatching(/already onboarded/) });
    expect(got.find((g) => key(g) === `${config} workflow.succeeded`)!.json.data.parameters.env_vars).toBe('API_KEY=***');
    expect(r.received.map((g) => g.body).join('\n')).not.toContain('s3cret');
  });

  it('gives up when attempts run past their deadline, and says so', async () => {
    const r = await receiver(() => ({ status: 503 }));
    const { call, deliveriesUntil } = await setUp({ allowPrivate: true, backoffMs: 50, giveUpAfterMs: 400 });
    await call('platform_set_tenant_webhooks', { name: 'acme', hooks: [{ url: `${r.url}/down`, events: ['policy.changed'] }] });
    await call('platform_set_tenant_policy', { name: 'acme', policy: POLICY });
    const [listed] = await deliveriesUntil('the delivery to be given up', (items) => items[0]?.outcome === 'failed');
    expect(listed).toMatchObject({ lastStatusCode: 503, nextAttemptAt: null, lastError: expect.stringMatching(/^gave up after \d+ attempts .*answered 503/) });
    expect(listed.attempts).toBeGreaterThanOrEqual(2);
    expect(r.received).toHaveLength(listed.attempts);
  });
});

describe('the outbound rule at each delivery', () => {
  it('refuses to send to a hook set while private addresses were allowed, once they are not', async () => {
    const r = await receiver();
    const dataDir = await tempDir();
    const secret = new TextEncoder().encode('s'.repeat(32));
    const first = await openSandbox(dataDir, { stepMs: 0, webhooks: { allowPrivate: true, backoffMs: 60_000, secret } });
    await run(first, 'create-tenant', { team_name: 'acme', admins: 'alice' });
    const ref = (await first.backend.getTenantRef('acme'))!;
    const at = { userId: 'alice', timestamp: new Date().toISOString() };
    const port = new URL(r.url).port;
    await first.webhooks.set(ref, [
      { url: `${r.url}/plain`, events: ['policy.changed'], format: 'json' },
      { url: `https://127.0.0.1:${port}/tls`, events: ['policy.changed'], format: 'json' },
    ], at);
    await first.close();

    const second = await openSandbox(dataDir, { stepMs: 0, webhooks: { allowPrivate: false, backoffMs: 60_000, secret } });
    await second.governance.setPolicy(ref, TenantPolicy.parse(POLICY), at);
    const deadline = Date.now() + 20_000;
    let items = await second.webhooks.deliveries(ref, 10);
    while (!(items.length === 2 && items.every((d) => d.attempts === 1))) {
      if (Date.now() > deadline) throw new Error(`no attempts recorded: ${JSON.stringify(items)}`);
      await new Promise((res) => setTimeout(res, 25));
      items = await second.webhooks.deliveries(ref, 10);
    }
    const byHook = await second.webhooks.list(ref);
    const errorOf = (path: string) => items.find((d) => d.hookId === byHook.find((h) => h.url.endsWith(path))!.id)!;
    expect(errorOf('/plain')).toMatchObject({ outcome: 'pending', lastStatusCode: null, lastError: expect.stringMatching(/must be https/) });
    expect(errorOf('/tls')).toMatchObject({ outcome: 'pending', lastStatusCode: null, lastError: expect.stringMatching(/public addresses: 127\.0\.0\.1 is loopback/) });
    expect(r.received).toEqual([]);
  });
});
