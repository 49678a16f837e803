/** The health route scan (templates/inspect/routes.ts): what it finds, what it prefers, and the limits it keeps. */
import { describe, expect, it } from 'vitest';
import { detectHealthRoute, routeSourceCandidates } from '../../../templates/inspect/routes.js';
import { Repo } from '../../../templates/repo.js';

const scan = (file: string, text: string, language: 'py' | 'js' | 'go') => detectHealthRoute(new Repo({ paths: [file], contents: { [file]: text } }), [file], language);

describe('routeSourceCandidates', () => {
  it('lists the Python app modules, then JS/TS entry files, then Go entry and router files, at most 12', () => {
    const paths = ['app/main.py', 'tests/test_main.py', 'src/server.ts', 'server.js', 'lib/util.js', 'main.go', 'cmd/api/main.go', 'cmd/api/main_test.go', 'internal/http/router.go', 'internal/db/db.go'];
    expect(routeSourceCandidates(paths)).toEqual(['app/main.py', 'server.js', 'src/server.ts', 'main.go', 'cmd/api/main.go', 'internal/http/router.go']);
    expect(routeSourceCandidates(Array.from({ length: 30 }, (_, i) => `cmd/c${i}/main.go`))).toHaveLength(12);
  });
});

describe('detectHealthRoute', () => {
  it.each([
    ['FastAPI', 'app/main.py', 'app = FastAPI()\n\n@app.get("/health")\ndef health(): ...\n', 'py', '/health'],
    ['FastAPI with path=', 'main.py', "@app.get(path='/healthz', include_in_schema=False)\n", 'py', '/healthz'],
    ['Flask route', 'app.py', "@app.route('/ping', methods=['GET'])\n", 'py', '/ping'],
    ['Express', 'server.js', "app.get('/health', (req, res) => res.send('ok'));\n", 'js', '/health'],
    ['Fastify template literal', 'src/index.ts', 'fastify.get(`/livez`, async () => ({ ok: true }));\n', 'js', '/livez'],
    ['net/http', 'main.go', 'http.HandleFunc("/health", health)\n', 'go', '/health'],
    ['ServeMux method pattern', 'main.go', 'mux.HandleFunc("GET /healthz", health)\n', 'go', '/healthz'],
    ['chi', 'main.go', 'r.Get("/healthcheck", health)\n', 'go', '/healthcheck'],
    ['gin', 'main.go', 'r.GET("/api/health", health)\n', 'go', '/api/health'],
  ] as const)('%s', (_, file, text, language, path) => {
    const r = scan(file, text, language);
    expect(r.path).toBe(path);
    expect(r.at).toMatch(new RegExp(`^${file.replace('.', '\\.')}:\\d+$`));
    expect(r.notes[0]).toMatchObject({ id: 'health-route', text: expect.stringContaining(`Found the health route ${path} at ${r.at}`) });
  });

  it('prefers /healthz, then /health, and names the others', () => {
    const r = scan('server.js', "app.get('/readyz', a);\napp.get('/health', b);\napp.get('/healthz', c);\napp.get('/users', d);\n", 'js');
    expect(r.path).toBe('/healthz');
    expect(r.at).toBe('server.js:3');
    expect(r.notes[0]!.text).toContain('(also found: /health, /readyz)');
  });

  it('skips routes on routers and groups, whose prefix it cannot see', () => {
    expect(scan('app/main.py', '@router.get("/health")\n', 'py').path).toBeUndefined();
    expect(scan('server.js', "apiRouter.get('/health', h);\n", 'js').path).toBeUndefined();
    expect(scan('main.go', 'v1.GET("/health", h)\n', 'go').path).toBeUndefined();
  });

  it('does not take client calls, other languages\' files, or non-health routes', () => {
    expect(scan('main.go', 'resp, _ := http.Get("http://127.0.0.1:8080/healthz")\n', 'go').path).toBeUndefined();
    expect(scan('server.js', "app.get('/health', h);\n", 'py').path).toBeUndefined();
    const none = scan('server.js', "app.get('/users', h);\n", 'js');
    expect(none.path).toBeUndefined();
    expect(none.notes).toEqual([{ id: 'health-route', text: expect.stringContaining('No health route found in server.js') }]);
  });

  it('reports and never uses a health route outside the probe-path grammar', () => {
    const r = scan('server.js', "app.get('/$(id)/health', h);\napp.get('/a b/healthz', h);\n", 'js');
    expect(r.path).toBeUndefined();
    expect(r.notes.map((n) => n.id)).toEqual(['health-route', 'health-route-refused']);
    expect(r.notes[1]!.text).toContain('"/$(id)/health" (server.js:1)');
  });

  it('ignores files that were not read', () => {
    const r = detectHealthRoute(new Repo({ paths: ['server.js'] }), ['server.js'], 'js');
    expect(r).toMatchObject({ scanned: [], notes: [{ id: 'health-route', text: expect.stringContaining('No source file was read') }] });
  });
});
