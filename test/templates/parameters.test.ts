/**
 * Validation once, at the door (issue 8): the scaffolding parameters are checked by ScaffoldParameters, which the
 * `platform_scaffold_repository` tool is built from (and `pds scaffold` parses with, see cli.test.ts); scaffold()
 * itself checks none of them again. A refused value never reaches the code host.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import type { Identity } from '../../auth/identity.js';
import type { Platform } from '../../core/ports.js';
import { ScaffoldParameters, scaffold } from '../../templates/index.js';
import { scaffoldRepository } from '../../tools/scaffold.js';
import { invoke, type InvokeDeps } from '../../tools/invoke.js';

const alice: Identity = { userId: 'alice', groups: [], admin: false, tokenKind: 'self-issued' };

/** A platform whose every port records the call and answers nothing: refused input must not touch it. */
function untouchable(): { platform: Platform; calls: string[] } {
  const calls: string[] = [];
  const port = (label: string) => new Proxy({}, { get: (_t, key) => (...args: unknown[]) => calls.push(`${label}.${String(key)}(${JSON.stringify(args)})`) });
  return { calls, platform: { backend: port('backend'), codeHost: port('codeHost'), workflows: port('workflows'), audit: port('audit'), once: port('once') } as unknown as Platform };
}

function deps(platform: Platform): InvokeDeps {
  return { platform, config: loadConfig({ PDS_BASE_URL: 'https://pds.example.com', PDS_DOMAIN: 'apps.example.com' }), confirmSecret: new Uint8Array(32) };
}

/** Values each rule refuses, by field. The scaffold() of before re-checked all of these; the door now does. */
const REFUSED: Record<keyof typeof ScaffoldParameters.shape, unknown[]> = {
  team_name: ['Acme', 'a', 'acme_web', 'x'.repeat(41)],
  component_name: ['Web', '-web', 'x'.repeat(41)],
  dockerfile_repo: ['acme', 'acme/web/extra', '-acme/web'],
  template: ['java', 'JavaScript'],
  pattern: ['weekly', 'Tag'],
  health_check_path: ['healthz"', 'healthz', '/a;b', '/$(id)', `/${'x'.repeat(200)}`],
  entry: ['', 'x'.repeat(201)],
  base_url: ['nope', 'ftp://pds.example.com', 'https://u:p@pds.example.com', 'https://pds.example.com/?a=1', 'https://pds.example.com/#x', 'javascript:alert(1)'],
};

/** Values each rule accepts, by field. */
const ACCEPTED: Record<keyof typeof ScaffoldParameters.shape, unknown[]> = {
  team_name: ['acme', 'a1', 'x'.repeat(40)],
  component_name: ['web', 'web-2'],
  dockerfile_repo: ['acme/web', 'Acme-Co/web.site_2'],
  template: ['javascript', 'python', 'go', 'static'],
  pattern: ['continuous', 'tag', 'manual', 'hybrid'],
  health_check_path: ['/', '/health', '/api/v1/health-check', '/status/~live.json'],
  entry: ['src/server.js', 'app.main:app', './cmd/api', 'build'],
  base_url: ['https://pds.example.com', 'http://127.0.0.1:8080', 'https://pds.example.com/base/'],
};

describe('ScaffoldParameters: one rule per field', () => {
  it('covers every field the tool takes besides the repository content', () => {
    const tool = Object.keys(scaffoldRepository.input.shape).filter((k) => k !== 'files' && k !== 'file_contents');
    expect(Object.keys(ScaffoldParameters.shape).sort()).toEqual(tool.sort());
  });

  it.each(Object.keys(REFUSED) as (keyof typeof REFUSED)[])('%s: the tool input and ScaffoldParameters refuse and accept the same values', (field) => {
    const shared = ScaffoldParameters.shape[field];
    const tool = scaffoldRepository.input.shape[field];
    for (const v of REFUSED[field]) {
      expect(shared.safeParse(v).success, `${field} ${JSON.stringify(v)}`).toBe(false);
      expect(tool.safeParse(v).success, `${field} ${JSON.stringify(v)}`).toBe(false);
    }
    for (const v of ACCEPTED[field]) {
      expect(shared.safeParse(v).success, `${field} ${JSON.stringify(v)}`).toBe(true);
      expect(tool.safeParse(v).success, `${field} ${JSON.stringify(v)}`).toBe(true);
    }
  });

  it('defaults pattern to continuous', () => {
    expect(ScaffoldParameters.parse({ team_name: 'acme' })).toEqual({ team_name: 'acme', pattern: 'continuous' });
  });
});

describe('platform_scaffold_repository at the door', () => {
  it.each(Object.entries(REFUSED).flatMap(([field, values]) => values.map((value) => ({ field, value }))))(
    'refuses $field=$value with INVALID_PARAMS naming the field, before the code host is asked',
    async ({ field, value }) => {
      const { platform, calls } = untouchable();
      const input = { team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', [field]: value };
      await expect(invoke(scaffoldRepository, input, alice, deps(platform))).rejects.toMatchObject({
        code: 'INVALID_PARAMS',
        message: expect.stringMatching(new RegExp(`^invalid parameters: ${field}: `)),
      });
      expect(calls).toEqual([]);
    },
  );

  it('accepts what the rules accept, and renders the address without a trailing slash', async () => {
    const { platform } = untouchable();
    const out = (await invoke(
      scaffoldRepository,
      { team_name: 'acme', component_name: 'web', files: ['package.json', 'server.js'], health_check_path: '/status/live', base_url: 'https://deploy.acme.dev/' },
      alice,
      deps(platform),
    )) as { files: { path: string; content: string }[]; onboarding: { health_check_path?: string } };
    expect(out.onboarding.health_check_path).toBe('/status/live');
    expect(out.files.find((f) => f.path === '.github/workflows/ci.yml')!.content).toContain('PDS_BASE_URL: "https://deploy.acme.dev"');
  });
});

describe('left to scaffold(): what only the repository decides', () => {
  it('the <team>-<service> length, once the service name is implied by the repository', () => {
    const team = 'a'.repeat(30);
    const repo = { paths: ['package.json'], contents: { 'package.json': JSON.stringify({ name: 'b'.repeat(33) }) } };
    expect(() => scaffold({ repo, team, baseUrl: 'https://pds.example.com' })).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }));
    expect(scaffold({ repo, team, component: 'web', baseUrl: 'https://pds.example.com' }).onboarding.component_name).toBe('web');
  });

  it('an entry of the wrong form for the template detected', () => {
    const base = { team: 'acme', component: 'api', baseUrl: 'https://pds.example.com' };
    expect(() => scaffold({ ...base, repo: { paths: ['requirements.txt'] }, entry: 'src/server.js' })).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }));
    expect(scaffold({ ...base, repo: { paths: ['package.json'] }, entry: 'src/server.js' }).entry).toBe('src/server.js');
  });
});
