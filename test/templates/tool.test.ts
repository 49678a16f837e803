/** platform_scaffold_repository and platform_list_templates: their contract, through their handlers. */
import { describe, expect, it } from 'vitest';
import { listTemplates, scaffoldRepository, scaffoldTools } from '../../tools/scaffold.js';
import type { z } from 'zod';
import type { ToolContext, ToolDefinition } from '../../tools/define.js';
import { MCP_DOOR } from '../../tools/door.js';

function context(opts: { registered?: string[]; tree?: { paths: string[]; files: Record<string, string> }; member?: boolean; policy?: object } = {}) {
  const calls: unknown[] = [];
  const ctx = {
    identity: { userId: 'alice', admin: false },
    settings: { baseUrl: 'https://pds.example.com', domain: 'apps.example.com' },
    door: MCP_DOOR,
    platform: {
      backend: {
        getTenant: async (team: string) => ({ name: team, members: opts.member === false ? [] : [{ userId: 'alice', role: 'viewer' }] }),
        getTenantRef: async (team: string) => ({ name: team, uid: `uid-${team}` }),
        // A refusal suggests close tenant names from those the caller belongs to (issue 19 item 5).
        listTenants: async () => [],
      },
      governance: { policy: async () => opts.policy ?? {} },
      codeHost: {
        listRepositories: async () => (opts.registered ?? []).map((fullName) => ({ fullName })),
        readTree: async (repo: string, o: { read?: string[] }) => {
          calls.push([repo, o]);
          const files = Object.fromEntries(Object.entries(opts.tree?.files ?? {}).filter(([p]) => o.read?.includes(p)));
          return { paths: opts.tree?.paths ?? [], files };
        },
      },
    },
  } as unknown as ToolContext;
  return { ctx, calls };
}

/** Parse the input, run the handler, and hold the result to the published output schema. */
async function call<I extends z.ZodObject, O extends z.ZodType>(tool: ToolDefinition<I, O>, input: unknown, ctx: ToolContext): Promise<z.output<O>> {
  const out = await tool.handler(tool.input.parse(input), ctx);
  return tool.output.parse(out);
}

describe('platform_scaffold_repository', () => {
  it('writes the GitHub Actions OIDC deploy job (no secret) for a member of a tenant whose policy enables ci.githubOidc', async () => {
    const input = { team_name: 'acme', component_name: 'web', files: ['package.json', 'server.js'] };
    const ci = { ci: { githubOidc: true, refs: ['refs/heads/main'] } };
    const job = async (c: ToolContext) => (await call(scaffoldRepository, input, c)).files.find((f) => f.path === '.github/workflows/ci.yml')!.content;
    const oidc = await job(context({ policy: ci }).ctx);
    expect(oidc).toContain('id-token: write');
    expect(oidc).not.toContain('secrets.PLATFORM_GITHUB_TOKEN');
    expect((await call(scaffoldRepository, input, context({ policy: ci }).ctx)).checklist.map((c) => c.id)).toContain('ci-oidc');
    // The PAT job (docs/api.md#ci-deploy-job) stays the default: no opt-in, or a caller who cannot read the tenant.
    for (const c of [context(), context({ policy: ci, member: false })]) {
      const pat = await job(c.ctx);
      expect(pat).toContain('secrets.PLATFORM_GITHUB_TOKEN');
      expect(pat).not.toContain('id-token');
    }
  });

  it('is a read tool at POST /api/v1/scaffold', () => {
    expect(scaffoldRepository.name).toBe('platform_scaffold_repository');
    expect(scaffoldRepository.rest).toEqual({ method: 'POST', path: '/api/v1/scaffold' });
    expect(scaffoldRepository.kind).toBe('read');
    expect(scaffoldRepository.access).toBe('authenticated');
    expect(scaffoldRepository.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true });
    expect(scaffoldTools).toEqual([scaffoldRepository, listTemplates]);
    for (const [field, schema] of Object.entries(scaffoldRepository.input.shape)) expect((schema as { description?: string }).description, field).toMatch(/e\.g\./);
  });

  it('scaffolds from a file list and manifests, with onboarding parameters and checklist', async () => {
    const { ctx } = context();
    const out = await call(scaffoldRepository, {
      team_name: 'acme',
      files: ['pyproject.toml', 'src/billing/main.py'],
      file_contents: { 'pyproject.toml': '[project]\nname = "billing"\n[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n', 'src/billing/main.py': 'app = FastAPI()\n' },
      dockerfile_repo: 'acme/billing',
      health_check_path: '/health',
    }, ctx);
    expect(out.template).toBe('python');
    expect(out.entry).toBe('billing.main:app');
    expect(out.files.map((f) => [f.path, f.exists])).toEqual([['Dockerfile', false], ['.dockerignore', false], ['.github/workflows/ci.yml', false], ['.github/dependabot.yml', false]]);
    expect(out.files[0]!.content).toContain('"exec uvicorn \\"$0\\" --host 0.0.0.0 --port \\"${PORT:-8000}\\" \\"$@\\"", "billing.main:app", "--app-dir", "src"]');
    expect(out.files[0]!.content).toContain('"http://127.0.0.1:${PORT:-8000}/health"');
    expect(out.files[2]!.content).toContain('PDS_BASE_URL: "https://pds.example.com"');
    expect(out.onboarding).toEqual({ action: 'onboard', team_name: 'acme', component_name: 'billing', dockerfile_repo: 'acme/billing', git_tag: '0.1.0', port: '8000', service_template: 'default', health_check_path: '/health' });
    expect(out.checklist.map((c) => c.id)).toEqual(['commit', 'secret', 'health-endpoint', 'repo-access', 'first-tag', 'onboard', 'verify', 'next-deploys', 'health-check-path']);
    expect(out.checklist.find((c) => c.id === 'verify')!.text).toContain('https://acme-billing.apps.example.com/health');
    expect(out.checklist.find((c) => c.id === 'secret')!.text).toContain('PLATFORM_GITHUB_TOKEN');
  });

  it('reads a registered dockerfile_repo through the code host', async () => {
    const { ctx, calls } = context({ registered: ['acme/web'], tree: { paths: ['package.json', 'server.js', 'Dockerfile'], files: { 'package.json': '{"name":"web","main":"server.js"}' } } });
    const out = await call(scaffoldRepository, { team_name: 'acme', dockerfile_repo: 'acme/web', base_url: 'https://deploy.acme.dev' }, ctx);
    // The manifests, then the entry files that may declare the health route.
    expect(calls).toEqual([['acme/web', { read: ['package.json', 'pyproject.toml', 'go.mod', 'requirements.txt', '.python-version'] }], ['acme/web', { read: ['server.js'] }]]);
    expect(out.template).toBe('javascript');
    expect(out.files.find((f) => f.path === 'Dockerfile')!.exists).toBe(true);
    expect(out.checklist[0]!.id).toBe('existing-files');
    expect(out.files[2]!.content).toContain('PDS_BASE_URL: "https://deploy.acme.dev"');
  });

  it('reads the app module of a registered repository and probes the /health route it serves (issue 19 item 6)', async () => {
    const { ctx } = context({
      registered: ['acme/api'],
      tree: {
        paths: ['requirements.txt', 'app/__init__.py', 'app/main.py'],
        files: { 'requirements.txt': 'fastapi==0.115.0\n', 'app/main.py': 'from fastapi import FastAPI\n\napp = FastAPI()\n\n@app.get("/health")\ndef health():\n    return {"ok": True}\n' },
      },
    });
    const out = await call(scaffoldRepository, { team_name: 'acme', dockerfile_repo: 'acme/api' }, ctx);
    expect(out.entry).toBe('app.main:app');
    expect(out.files[0]!.content).toContain('"http://127.0.0.1:${PORT:-8000}/health" || exit 1');
    expect(out.onboarding.health_check_path).toBe('/health');
    expect(out.checklist.find((c) => c.id === 'health-route')!.text).toContain('Found the health route /health at app/main.py:5');
    expect(out.checklist.find((c) => c.id === 'onboard')!.text).toContain('pds deploy acme/api --onboard --port 8000 --tag 0.1.0 --repo acme/api --health-check-path /health');
  });

  it('will not read a repository the team has not registered', async () => {
    const { ctx, calls } = context({ registered: ['acme/other'] });
    await expect(call(scaffoldRepository, { team_name: 'acme', dockerfile_repo: 'evil/secret' }, ctx)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(calls).toEqual([]);
    const outsider = context({ registered: ['acme/web'], member: false });
    await expect(call(scaffoldRepository, { team_name: 'acme', dockerfile_repo: 'acme/web' }, outsider.ctx)).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('answers INVALID_PARAMS when no template fits or several do', async () => {
    const { ctx } = context();
    await expect(call(scaffoldRepository, { team_name: 'acme', component_name: 'x', files: ['README.md'] }, ctx)).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    await expect(call(scaffoldRepository, { team_name: 'acme', component_name: 'x', files: ['go.mod', 'requirements.txt'] }, ctx)).rejects.toMatchObject({
      code: 'INVALID_PARAMS',
      message: expect.stringContaining('Pass template=<python|go>'),
    });
    await expect(call(scaffoldRepository, { team_name: 'acme' }, ctx)).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
  });
});

describe('platform_list_templates', () => {
  it('lists the four templates and four patterns at GET /api/v1/templates', async () => {
    expect(listTemplates.rest).toEqual({ method: 'GET', path: '/api/v1/templates' });
    const out = await call(listTemplates, {}, context().ctx);
    expect(out.items.map((t) => [t.id, t.port, t.health_check_path])).toEqual([
      ['javascript', '8787', '/healthz'],
      ['python', '8000', '/healthz'],
      ['go', '8080', '/healthz'],
      ['static', '8080', '/'],
    ]);
    expect(out.count).toBe(4);
    expect(out.patterns.map((p) => p.id)).toEqual(['continuous', 'tag', 'manual', 'hybrid']);
  });
});
