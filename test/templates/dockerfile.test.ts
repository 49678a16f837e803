/**
 * Every rendered Dockerfile, parsed with dockerfile-ast, against the rules of
 * `docs/api.md#scaffolding-templates`: small base, non-root user, minimal init as entrypoint, health check flags and target, port,
 * PORT honoured, and the per-template rules 4 and 5.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { DockerfileParser, type Dockerfile, type Instruction } from 'dockerfile-ast';
import { describe, expect, it } from 'vitest';
import { scaffold, type ScaffoldPlan } from '../../templates/index.js';
import { SAMPLES, type Sample } from './repos.js';

const BASE = 'https://pds.example.com';

function plan(sample: Sample, healthCheckPath?: string): ScaffoldPlan {
  return scaffold({ repo: sample.repo, team: 'acme', component: 'svc', baseUrl: BASE, healthCheckPath });
}

function file(p: ScaffoldPlan, path: string): string {
  const f = p.files.find((x) => x.path === path);
  expect(f, `${path} is rendered`).toBeDefined();
  return f!.content;
}

/** Instructions of the final stage. */
function finalStage(df: Dockerfile): Instruction[] {
  const froms = df.getFROMs();
  const lastFrom = froms[froms.length - 1]!.getRange().start.line;
  return df.getInstructions().filter((i) => i.getRange().start.line >= lastFrom);
}

function one(stage: Instruction[], keyword: string): Instruction {
  const found = stage.filter((i) => i.getKeyword() === keyword);
  expect(found, `exactly one ${keyword} in the final stage`).toHaveLength(1);
  return found[0]!;
}

function jsonArgs(i: Instruction): string[] {
  // Exec form: dockerfile-ast sees a JSON array; its string values are read with JSON.parse.
  const json = (i as unknown as { getJSONStrings(): unknown[] }).getJSONStrings();
  expect(json.length, `${i.getKeyword()} is in exec (JSON) form`).toBeGreaterThan(0);
  return JSON.parse(i.getArgumentsContent()!) as string[];
}

const PORT_ENV: Record<string, boolean> = { javascript: true, python: true, go: true, static: false };

describe.each(SAMPLES)('Dockerfile for $name ($template)', (sample) => {
  for (const healthCheckPath of [undefined, '/status/live']) {
    describe(healthCheckPath ? `with health_check_path ${healthCheckPath}` : 'with the default probe', () => {
      const p = plan(sample, healthCheckPath);
      const text = file(p, 'Dockerfile');
      const df = DockerfileParser.parse(text);
      const stage = finalStage(df);
      const probe = healthCheckPath ?? sample.expect.probe;

      it('detects the template and the entry', () => {
        expect(p.template).toBe(sample.template);
        expect(p.entry).toBe(sample.expect.entry);
        expect(p.onboarding.port).toBe(sample.expect.port);
      });

      it('parses cleanly: every instruction is a known keyword', () => {
        const known = new Set(['FROM', 'RUN', 'CMD', 'COPY', 'ENV', 'WORKDIR', 'USER', 'EXPOSE', 'HEALTHCHECK', 'ENTRYPOINT', 'ARG']);
        for (const i of df.getInstructions()) expect(known, i.getKeyword()).toContain(i.getKeyword());
        expect(df.getFROMs().every((f) => f.getImageTag())).toBe(true); // pinned, never :latest by omission
      });

      it('uses a small base image (slim / alpine)', () => {
        const final = df.getFROMs().at(-1)!;
        expect(final.getImageTag()).toMatch(/(^|-)(alpine|slim)$|^3\.\d+$/);
        if (final.getImageName() === 'alpine') expect(final.getImageTag()).toMatch(/^3\.\d+$/);
        for (const f of df.getFROMs()) expect(`${f.getImageName()}:${f.getImageTag()}`).toMatch(/alpine|slim/);
      });

      it('runs as a non-root numeric user', () => {
        // The last USER wins (static switches to root only to install tini).
        const users = stage.filter((i) => i.getKeyword() === 'USER');
        expect(users.length).toBeGreaterThan(0);
        expect(users.at(-1)!.getArgumentsContent()).toMatch(/^[1-9]\d*(:[1-9]\d*)?$/);
        const afterUser = stage.filter((i) => i.getRange().start.line > users.at(-1)!.getRange().start.line).map((i) => i.getKeyword());
        expect(afterUser).not.toContain('RUN');
      });

      it('has tini as the entrypoint', () => {
        const args = jsonArgs(one(stage, 'ENTRYPOINT'));
        expect(args[0]).toMatch(/^\/(sbin|usr\/bin)\/tini$/);
        expect(args.slice(1)).toEqual(['--']);
        const installs = stage.filter((i) => i.getKeyword() === 'RUN').map((i) => i.getArgumentsContent()).join('\n');
        expect(installs).toMatch(/(apk add --no-cache|apt-get install -y --no-install-recommends) tini/);
      });

      it('declares the health check: interval 30s, timeout 5s, start-period 15s, retries 3, against the probe', () => {
        const hc = one(stage, 'HEALTHCHECK') as unknown as {
          getFlags(): { getName(): string; getValue(): string | null }[];
          getSubcommand(): { getValue(): string } | null;
          getArgumentsContent(): string;
        };
        const flags = Object.fromEntries(hc.getFlags().map((f) => [f.getName(), f.getValue()]));
        expect(flags).toEqual({ interval: '30s', timeout: '5s', 'start-period': '15s', retries: '3' });
        expect(hc.getSubcommand()?.getValue()).toBe('CMD');
        const target = PORT_ENV[sample.template]
          ? `"http://127.0.0.1:\${PORT:-${sample.expect.port}}${probe}"`
          : `"http://127.0.0.1:${sample.expect.port}${probe}"`;
        expect(hc.getArgumentsContent()).toContain(target);
        expect(hc.getArgumentsContent()).toMatch(/\|\| exit 1$/);
      });

      it('exposes the port and honours PORT', () => {
        expect(one(stage, 'EXPOSE').getArgumentsContent()).toBe(sample.expect.port);
        const env = stage.filter((i) => i.getKeyword() === 'ENV').map((i) => i.getArgumentsContent()).join(' ');
        if (PORT_ENV[sample.template]) expect(env).toMatch(new RegExp(`(^|\\s)PORT=${sample.expect.port}(\\s|\\\\|$)`));
        else expect(env).not.toMatch(/PORT=/);
      });

      it('comes with a .dockerignore', () => {
        const ignore = file(p, '.dockerignore').split('\n');
        expect(ignore).toContain('.git');
        expect(ignore).toContain('.env');
        expect(ignore).not.toContain('nginx.conf');
      });

      it(`follows the ${sample.template} rule`, () => {
        const cmd = one(stage, 'CMD');
        const runs = df.getInstructions().filter((i) => i.getKeyword() === 'RUN').map((i) => i.getArgumentsContent()!);
        switch (sample.template) {
          case 'javascript': {
            expect(jsonArgs(cmd)).toEqual(['node', sample.expect.entry]);
            const env = stage.filter((i) => i.getKeyword() === 'ENV').map((i) => i.getArgumentsContent()).join(' ');
            expect(env).toMatch(/NODE_ENV=production/);
            break;
          }
          case 'python': {
            expect(df.getFROMs()).toHaveLength(2);
            expect(df.getFROMs()[0]!.getBuildStage()).toBe('build');
            expect(text).toMatch(/^COPY --from=build \/opt\/venv \/opt\/venv$/m);
            // The shell only reads $PORT; the application is its first positional argument, not shell text.
            expect(jsonArgs(cmd).slice(0, 4)).toEqual(['sh', '-c', 'exec uvicorn "$0" --host 0.0.0.0 --port "${PORT:-8000}" "$@"', sample.expect.entry]);
            break;
          }
          case 'go': {
            expect(df.getFROMs()).toHaveLength(2);
            // Exec form: the package path is an argument of go build, not shell text.
            const build = JSON.parse(runs.find((r) => r.includes('"build"'))!) as string[];
            expect(build.slice(0, 2)).toEqual(['go', 'build']);
            expect(build.at(-1)).toBe(sample.expect.entry);
            expect(text).toMatch(/^ENV CGO_ENABLED=0 \\$/m);
            expect(jsonArgs(cmd)).toEqual(['/usr/local/bin/server']);
            break;
          }
          case 'static': {
            expect(jsonArgs(cmd)).toEqual(['nginx', '-g', 'daemon off;']);
            const conf = file(p, 'nginx.conf');
            expect(conf).toMatch(/^\s*listen 8080;$/m);
            expect(conf).toMatch(/^\s*try_files \$uri \$uri\/ \/index\.html;$/m);
            const copies = stage.filter((i) => i.getKeyword() === 'COPY').map((i) => i.getArgumentsContent());
            expect(copies).toContain('nginx.conf /etc/nginx/conf.d/default.conf');
            expect(copies.some((c) => /dist\/ \/usr\/share\/nginx\/html\/$/.test(c!))).toBe(true);
            break;
          }
        }
      });

      if (healthCheckPath) {
        it('puts health_check_path into the onboarding parameters too', () => {
          expect(p.onboarding.health_check_path).toBe(healthCheckPath);
          expect(text).not.toContain(`${sample.expect.port}${sample.expect.probe}"`);
        });
      } else {
        // SPEC rule 7: the image check and the platform probes use the same path (issue 19 item 6).
        it('probes the route the app serves, in the image and (when not the default) at onboarding', () => {
          const defaultPath = sample.template === 'static' ? '/' : '/healthz';
          expect(p.onboarding.health_check_path).toBe(sample.expect.probe === defaultPath ? undefined : sample.expect.probe);
          if (sample.expect.probe !== defaultPath) expect(p.checklist.find((c) => c.id === 'health-route')?.text).toContain(`Found the health route ${sample.expect.probe}`);
        });
      }

      it('pins what it installs beyond the project\'s own dependencies (issue 19 item 6)', () => {
        for (const i of df.getInstructions().filter((x) => x.getKeyword() === 'RUN')) {
          const run = i.getArgumentsContent()!;
          if (run.startsWith('[')) continue; // exec form: the project's own [project].dependencies
          for (const m of run.matchAll(/pip install (?!-r |\.(\s|$))(\S+)/g)) expect(m[2], run).toMatch(/^[\w.-]+==\d+(\.\d+)*$/);
        }
      });

      it('builds with kaniko as well as BuildKit: no RUN --mount, --network, --security, COPY --link or heredoc', () => {
        for (const i of df.getInstructions()) {
          const flags = (i as unknown as { getFlags?(): { getName(): string }[] }).getFlags?.().map((f) => f.getName()) ?? [];
          expect(flags, i.toString()).not.toContain('mount');
          expect(flags).not.toContain('network');
          expect(flags).not.toContain('security');
          expect(flags).not.toContain('link');
        }
        expect(text).not.toMatch(/<<-?\s*["']?[A-Za-z_]/);
        expect(text).not.toMatch(/--mount|--link\b/);
      });
    });
  }
});

describe('kaniko compatibility of every Dockerfile template source', () => {
  // pds builds with kaniko, which has no RUN --mount and no heredocs; BuildKit-only syntax must not creep in.
  const dir = new URL('../../templates/dockerfiles/', import.meta.url);
  const sources = readdirSync(dir).filter((f) => f.endsWith('.Dockerfile.tmpl'));
  it('covers all four templates', () => expect(sources.sort()).toEqual(['go.Dockerfile.tmpl', 'javascript.Dockerfile.tmpl', 'python.Dockerfile.tmpl', 'static.Dockerfile.tmpl']));
  it.each(sources)('%s has no --mount, --link, --network, --security or heredoc', (f) => {
    const text = readFileSync(new URL(f, dir), 'utf8');
    expect(text).not.toMatch(/--(mount|link|network|security)\b/);
    expect(text).not.toMatch(/<<-?\s*["']?[A-Za-z_]/);
  });
});

describe('compiled apps are built in the build stage (issue 19 item 6)', () => {
  const stages = (text: string) => {
    const df = DockerfileParser.parse(text);
    const build = df.getInstructions().filter((i) => i.getRange().start.line < df.getFROMs()[1]!.getRange().start.line);
    return { build: build.filter((i) => i.getKeyword() === 'RUN').map((i) => i.getArgumentsContent()), final: finalStage(df) };
  };
  it.each([
    ['a build script', 'TypeScript server built into dist/', 'npm run build'],
    ['tsconfig.json and typescript, no build script', 'TypeScript server compiled by tsc alone, serving /health', 'npx tsc'],
  ])('with %s: installs everything, builds, prunes to production dependencies, ships the output', (_, name, build) => {
    const sample = SAMPLES.find((s) => s.name === name)!;
    const p = plan(sample);
    const text = file(p, 'Dockerfile');
    const { build: runs, final } = stages(text);
    expect(runs).toEqual(['npm ci', build, 'npm prune --omit=dev']);
    expect(final.filter((i) => i.getKeyword() === 'COPY')).toHaveLength(1);
    expect(text).toMatch(/^COPY --from=build \/app \.\/$/m);
    expect(jsonArgs(one(final, 'CMD'))).toEqual(['node', sample.expect.entry]);
    // CI builds it the same way.
    expect(file(p, '.github/workflows/ci.yml')).toContain(`run: ${build}\n`);
  });
  it('a plain JavaScript server installs production dependencies only', () => {
    const { build } = stages(file(plan(SAMPLES.find((s) => s.name === 'express server with a lockfile')!), 'Dockerfile'));
    expect(build).toEqual(['npm ci --omit=dev']);
  });
});

describe('adjustable entries', () => {
  it('JS entry script', () => {
    const p = scaffold({ repo: { paths: ['package.json'] }, team: 'acme', component: 'web', baseUrl: BASE, entry: './bin/www.js' });
    expect(p.files[0]!.content).toContain('CMD ["node", "bin/www.js"]');
  });
  it('Python <module>:<app>', () => {
    const p = scaffold({ repo: { paths: ['requirements.txt'] }, team: 'acme', component: 'api', baseUrl: BASE, entry: 'service.asgi:application' });
    expect(p.files[0]!.content).toContain('CMD ["sh", "-c", "exec uvicorn \\"$0\\" --host 0.0.0.0 --port \\"${PORT:-8000}\\" \\"$@\\"", "service.asgi:application"]');
    expect(p.checklist.map((c) => c.id)).not.toContain('python-app');
  });
  it('Python placeholder when nothing shows the app, said in the checklist', () => {
    const p = scaffold({ repo: { paths: ['requirements.txt', 'lib/util.py'] }, team: 'acme', component: 'api', baseUrl: BASE });
    expect(p.entry).toBe('main:app');
    expect(p.checklist.find((c) => c.id === 'python-app')?.text).toMatch(/placeholder "main:app"/);
  });
  it('Go package path', () => {
    const p = scaffold({ repo: { paths: ['go.mod', 'cmd/api/main.go', 'cmd/worker/main.go'] }, team: 'acme', component: 'api', baseUrl: BASE, entry: 'cmd/api' });
    expect(p.files[0]!.content).toMatch(/"-o", "\/out\/server", "\.\/cmd\/api"\]$/m);
  });
  it('refuses an entry that is not a path / module', () => {
    expect(() => scaffold({ repo: { paths: ['go.mod'] }, team: 'acme', component: 'api', baseUrl: BASE, entry: '../x; rm -rf /' })).toThrow(
      expect.objectContaining({ code: 'INVALID_PARAMS' }),
    );
    // A health_check_path such as 'healthz"' is refused at the door now (ScaffoldParameters), not by scaffold():
    // parameters.test.ts (the tool) and cli.test.ts (pds scaffold) assert it.
  });
});
