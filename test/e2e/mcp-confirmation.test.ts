/**
 * A person behind destructive calls (issue 11 item 5), against a started pds with every client of
 * test/helpers/mcp-clients.ts: over REST the confirmation stays `{ "error" }` with the `PDS-Confirm*` headers; over
 * MCP it is an `isError` result whose `structuredContent` is `{ confirm, expiresAt, plan }` (a client that validates
 * error results against the output schema — the v1 SDK — accepts it); a client that can be asked (2026-07-28 over
 * HTTP; every protocol over `pds mcp` on stdio, where 2025-11-25 asks through the SDK's shim) gets a form instead,
 * and the operation runs only on "yes". Each case checks the effect: the service retired or still there, the audit
 * entry written or not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateSecret } from '../../auth/self-issued.js';
import { createRequestStateCodec } from '../../tools/request-state.js';
import { createWriteLimiter } from '../../rest/ratelimit.js';
import { CLIENTS, connectHttp, connectStdio, textOf, type ClientKind, type StdioTarget, type TestClient } from '../helpers/mcp-clients.js';
import { registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

let pds: TestServer;
let stdioTarget: StdioTarget;
let next = 0;

/** A fresh onboarded service of tenant acme, so each case retires its own. */
async function service(): Promise<string> {
  const app = `svc${++next}`;
  await registerRepository(pds, 'alice', 'acme', `acme/${app}`);
  const res = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', {
    action: 'onboard', team_name: 'acme', component_name: app, dockerfile_repo: `acme/${app}`, git_tag: '0.1.0', port: '8080',
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect((await waitForWorkflow(pds, 'alice', res.body.workflowName)).audit.status).toBe('succeeded');
  return app;
}

const exists = async (app: string) => (await pds.api('alice', 'GET', `/api/v1/services/acme/${app}`)).status === 200;
/** Audit entries of retire-service for `app`. */
const retirements = async (app: string) =>
  (await pds.api('root', 'GET', '/api/v1/audit')).body.items.filter((e: any) => e.operation === 'retire-service' && e.parameters.component_name === app);

beforeAll(async () => {
  // Each case onboards and retires a service of its own: more writes than the 20/min a person gets.
  pds = await startTestServer({}, { writeLimiter: createWriteLimiter({ max: 1000 }) });
  const created = await pds.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'acme', admins: 'alice' });
  await waitForWorkflow(pds, 'root', created.body.workflowName);
  stdioTarget = {
    command: process.execPath,
    args: ['bin/pds-src.js', 'mcp', '--toolsets', 'all'],
    env: { ...(process.env as Record<string, string>), PDS_BASE_URL: pds.url, PDS_TOKEN: await pds.token('alice') },
  };
});
afterAll(() => pds.stop());

describe('over REST', () => {
  it('answers 400 with exactly { error } and the confirmation in PDS-Confirm headers, changing nothing', async () => {
    const app = await service();
    const res = await pds.api('alice', 'POST', '/api/v1/operations/retire-service/execute', { team_name: 'acme', component_name: app });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['error']);
    const confirm = res.headers.get('pds-confirm')!;
    expect(res.body.error).toContain(confirm);
    expect(Date.parse(res.headers.get('pds-confirm-expires')!)).toBeGreaterThan(Date.now());
    expect(res.headers.get('pds-confirm-plan')).toMatch(new RegExp(`permanently remove service acme/${app}`));
    expect(await retirements(app)).toEqual([]);
    const done = await pds.api('alice', 'POST', '/api/v1/operations/retire-service/execute', { team_name: 'acme', component_name: app, confirm });
    expect(done.status).toBe(200);
    await waitForWorkflow(pds, 'alice', done.body.workflowName);
    expect(await exists(app)).toBe(false);
  });
});

/** A client that answers elicitation with whatever `answer` holds at the time. */
function asker(): { onElicit: (p: { message: string }) => any; questions: string[]; answer: { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> } } {
  const state = {
    questions: [] as string[],
    answer: { action: 'accept' as 'accept' | 'decline' | 'cancel', content: { confirm: true } as Record<string, unknown> | undefined },
    onElicit: (p: { message: string }) => {
      state.questions.push(p.message);
      return state.answer;
    },
  };
  return state;
}

async function connectAs(kind: ClientKind, options: { onElicit?: (p: { message: string }) => any } = {}): Promise<TestClient> {
  const client = await connectHttp(kind, `${pds.url}/mcp?toolsets=all`, { Authorization: `Bearer ${await pds.token('alice')}` }, options as never);
  await client.listTools(); // the v1 client now holds the output validators it checks results against
  return client;
}

describe.each(CLIENTS)('a client that cannot be asked: $name', (kind) => {
  it('gets the confirmation as structuredContent of an isError result, and runs with the value sent back', async () => {
    const app = await service();
    const client = await connectAs(kind);
    try {
      const asked = await client.callTool({ name: 'platform_retire_service', arguments: { team_name: 'acme', component_name: app } });
      expect(asked.isError).toBe(true);
      expect(asked.structuredContent).toEqual({ confirm: expect.any(String), expiresAt: expect.any(String), plan: expect.stringContaining(`acme/${app}`) });
      expect(textOf(asked)).toContain(asked.structuredContent.confirm);
      expect(await retirements(app)).toEqual([]);
      const done = await client.callTool({
        name: 'platform_retire_service',
        arguments: { team_name: 'acme', component_name: app, confirm: asked.structuredContent.confirm },
      });
      expect(done.isError).toBeFalsy();
      await waitForWorkflow(pds, 'alice', done.structuredContent.workflowName);
      expect(await exists(app)).toBe(false);
    } finally {
      await client.close();
    }
  });
});

describe.each(CLIENTS.filter((k) => k.protocol === '2025-11-25'))('a 2025-11-25 client over stateless HTTP: $name', (kind) => {
  it('is not asked even when it declares elicitation (no way back to it), and gets the confirm value', async () => {
    const app = await service();
    const person = asker();
    const client = await connectAs(kind, person);
    try {
      const asked = await client.callTool({ name: 'platform_retire_service', arguments: { team_name: 'acme', component_name: app } });
      expect(asked.isError).toBe(true);
      expect(asked.structuredContent.confirm).toEqual(expect.any(String));
      expect(person.questions).toEqual([]);
      expect(await exists(app)).toBe(true);
    } finally {
      await client.close();
    }
  });
});

/** The three answers a person can give, and what each must leave behind. */
const ANSWERS = [
  { answer: 'yes', reply: { action: 'accept', content: { confirm: true } }, runs: true },
  { answer: 'no', reply: { action: 'accept', content: { confirm: false } }, runs: false },
  { answer: 'declined', reply: { action: 'decline' }, runs: false },
  { answer: 'cancelled', reply: { action: 'cancel' }, runs: false },
] as const;

/** Retire a fresh service through `client`, answering with `reply`; checks what must follow. */
async function retireAnswering(client: TestClient, person: ReturnType<typeof asker>, reply: (typeof ANSWERS)[number]['reply'], runs: boolean, tool = 'platform_retire_service') {
  const app = await service();
  person.answer = reply as never;
  person.questions.length = 0;
  const args = { team_name: 'acme', component_name: app };
  const result = await client.callTool(
    tool === 'platform_retire_service' ? { name: tool, arguments: args } : { name: tool, arguments: { name: 'retire-service', parameters: args } },
  );
  expect(person.questions).toHaveLength(1);
  expect(person.questions[0]).toMatch(new RegExp(`retire-service will permanently remove service acme/${app}`));
  if (runs) {
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ operation: 'retire-service', status: 'submitted' });
    expect(JSON.stringify(result)).not.toMatch(/"confirm"/); // the model never sees the value
    await waitForWorkflow(pds, 'alice', result.structuredContent.workflowName);
    expect(await exists(app)).toBe(false);
    expect(await retirements(app)).toHaveLength(1);
  } else {
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(textOf(result)).toMatch(/^retire-service was not run: .* Nothing was changed\.$/);
    expect(await exists(app)).toBe(true);
    expect(await retirements(app)).toEqual([]);
  }
}

describe('a 2026-07-28 client over HTTP that can be asked (stateless: input_required, then the answer)', () => {
  const modern = CLIENTS.find((k) => k.protocol === '2026-07-28')!;
  let client: TestClient;
  const person = asker();
  beforeAll(async () => {
    client = await connectAs(modern, person);
  });
  afterAll(() => client?.close());

  it.each(ANSWERS)('asks the person with the plan and runs only on yes: $answer', async ({ reply, runs }) => {
    await retireAnswering(client, person, reply, runs);
  });

  it('asks for platform_execute_operation too, and runs the operation it names on yes', async () => {
    await retireAnswering(client, person, ANSWERS[0].reply, true, 'platform_execute_operation');
  });
});

describe.each(CLIENTS)('pds mcp on stdio with a client that can be asked: $name', (kind) => {
  let client: TestClient;
  const person = asker();
  beforeAll(async () => {
    client = await connectStdio(kind, stdioTarget, person as never);
    await client.listTools();
  });
  afterAll(() => client?.close());

  it.each(ANSWERS.filter((a) => a.answer !== 'no'))('asks the person with the plan and runs only on yes: $answer', async ({ reply, runs }) => {
    await retireAnswering(client, person, reply, runs);
  });
});

describe('the answer belongs to the question', () => {
  const post = (params: Record<string, unknown>, token: string) =>
    fetch(`${pds.url}/mcp?toolsets=all`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'platform_retire_service',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'platform_retire_service',
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
          },
        },
      }),
    }).then((r) => r.json() as Promise<any>);

  it('refuses a "yes" sent back with other arguments than the ones the person was asked about', async () => {
    const asked = await service();
    const other = await service();
    const token = await pds.token('alice');
    const first = await post({ arguments: { team_name: 'acme', component_name: asked } }, token);
    expect(first.result.resultType).toBe('input_required');
    const { requestState } = first.result;
    const swapped = await post(
      { arguments: { team_name: 'acme', component_name: other }, requestState, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } },
      token,
    );
    expect(swapped.result.isError).toBe(true);
    expect(textOf(swapped.result)).toMatch(/^confirm: the value does not match this caller, operation and parameters/);
    expect(await exists(other)).toBe(true);
    expect(await exists(asked)).toBe(true);
    expect(await retirements(other)).toEqual([]);
  });

  /** Every text a client could get from `state` by decoding: each segment and each prefix of it, as base64 and base64url. */
  function decodings(state: string): string[] {
    const out = [state];
    for (const part of [state, ...state.split('.')]) {
      for (let end = 1; end <= part.length; end++) {
        const prefix = part.slice(0, end);
        out.push(Buffer.from(prefix, 'base64url').toString('latin1'), Buffer.from(prefix, 'base64').toString('latin1'));
        out.push(Buffer.from(prefix, 'base64url').toString('utf8'));
      }
    }
    return out;
  }

  it('sends the confirm value only encrypted: no prefix, base64/base64url decoding or substring of requestState holds it', async () => {
    const app = await service();
    const token = await pds.token('alice');
    const first = await post({ arguments: { team_name: 'acme', component_name: app } }, token);
    expect(first.result.resultType).toBe('input_required');
    const state: string = first.result.requestState;
    // Nothing a client decodes names the field, let alone holds its value.
    for (const text of decodings(state)) expect(text.includes('confirm'), text.slice(0, 200)).toBe(false);
    // The server (and only it) opens the state: that is how the test learns the value to look for.
    const secret = await loadOrCreateSecret(pds.config.jwtSecret, pds.dataDir);
    const opened = await createRequestStateCodec<{ state: { confirm: string } }>(secret).verify(state);
    const confirm = opened.state.confirm;
    expect(confirm.length).toBeGreaterThan(16);
    const pieces = [confirm, ...confirm.split('.').filter((p) => p.length >= 8)];
    for (const text of decodings(state)) for (const piece of pieces) expect(text.includes(piece)).toBe(false);
    expect(JSON.stringify(first)).not.toContain(confirm);
    expect(await exists(app)).toBe(true);
  });

  it('refuses a requestState the client changed, and runs nothing', async () => {
    const app = await service();
    const token = await pds.token('alice');
    const first = await post({ arguments: { team_name: 'acme', component_name: app } }, token);
    const state: string = first.result.requestState;
    const parts = state.split('.');
    // Flip one character of the ciphertext (the fourth segment of a compact JWE), then of the tag.
    for (const index of [3, 4]) {
      const segment = parts[index]!;
      const flipped = `${segment[0] === 'A' ? 'B' : 'A'}${segment.slice(1)}`;
      const tampered = parts.map((p, i) => (i === index ? flipped : p)).join('.');
      const answer = await post(
        { arguments: { team_name: 'acme', component_name: app }, requestState: tampered, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } },
        token,
      );
      expect(answer.error?.code ?? answer.result?.isError, JSON.stringify(answer)).toBeTruthy();
    }
    expect(await exists(app)).toBe(true);
    expect(await retirements(app)).toEqual([]);
  });
});
