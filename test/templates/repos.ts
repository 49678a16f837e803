/** Sample repositories (file lists and manifests) for the scaffolding tests, one or more per template. */
import type { RepoSnapshot, TemplateId } from '../../templates/index.js';

export interface Sample {
  name: string;
  template: TemplateId;
  repo: RepoSnapshot;
  /** What the image must start / build. */
  expect: { entry: string; port: string; probe: string };
}

const pkg = (o: object) => JSON.stringify(o, null, 2);

export const SAMPLES: Sample[] = [
  {
    name: 'express server with a lockfile',
    template: 'javascript',
    repo: {
      paths: ['package.json', 'package-lock.json', 'src/server.js', 'README.md'],
      contents: { 'package.json': pkg({ name: 'web', scripts: { start: 'node src/server.js', test: 'node --test' }, dependencies: { express: '^4.19.0' } }) },
    },
    expect: { entry: 'src/server.js', port: '8787', probe: '/healthz' },
  },
  {
    name: 'TypeScript server built into dist/',
    template: 'javascript',
    repo: {
      paths: ['package.json', 'package-lock.json', 'tsconfig.json', 'src/index.ts'],
      contents: { 'package.json': pkg({ name: '@acme/orders-api', main: 'dist/index.js', scripts: { build: 'tsc' }, dependencies: { fastify: '^4' } }) },
    },
    expect: { entry: 'dist/index.js', port: '8787', probe: '/healthz' },
  },
  {
    name: 'bare index.js without package.json',
    template: 'javascript',
    repo: { paths: ['index.js'] },
    expect: { entry: 'index.js', port: '8787', probe: '/healthz' },
  },
  {
    name: 'FastAPI app with requirements.txt',
    template: 'python',
    repo: {
      paths: ['requirements.txt', 'app/__init__.py', 'app/main.py', 'tests/test_main.py'],
      contents: { 'app/main.py': 'from fastapi import FastAPI\n\napi = FastAPI()\n', 'requirements.txt': 'fastapi==0.115.0\nuvicorn==0.30.0\n' },
    },
    expect: { entry: 'app.main:api', port: '8000', probe: '/healthz' },
  },
  {
    name: 'pyproject without a build system',
    template: 'python',
    repo: {
      paths: ['pyproject.toml', 'main.py'],
      contents: { 'pyproject.toml': '[project]\nname = "Billing_Service"\nrequires-python = ">=3.11"\ndependencies = ["starlette>=0.37", "httpx"]\n' },
    },
    expect: { entry: 'main:app', port: '8000', probe: '/healthz' },
  },
  {
    name: 'Go module with cmd/server',
    template: 'go',
    repo: {
      paths: ['go.mod', 'go.sum', 'cmd/server/main.go', 'internal/api/api.go'],
      contents: { 'go.mod': 'module github.com/acme/inventory\n\ngo 1.22.3\n' },
    },
    expect: { entry: './cmd/server', port: '8080', probe: '/healthz' },
  },
  {
    name: 'Go module with main.go at the root',
    template: 'go',
    repo: { paths: ['go.mod', 'main.go'], contents: { 'go.mod': 'module example.com/hello\n\ngo 1.23\n' } },
    expect: { entry: '.', port: '8080', probe: '/healthz' },
  },
  {
    name: 'committed SPA build output',
    template: 'static',
    repo: { paths: ['dist/index.html', 'dist/assets/app-1a2b.js', 'README.md'] },
    expect: { entry: 'dist', port: '8080', probe: '/' },
  },
  {
    name: 'vite SPA built in the image',
    template: 'static',
    repo: {
      paths: ['package.json', 'package-lock.json', 'index.html', 'src/main.tsx', 'vite.config.ts'],
      contents: { 'package.json': pkg({ name: 'dashboard', scripts: { dev: 'vite', build: 'vite build' }, dependencies: { react: '^18' }, devDependencies: { vite: '^5' } }) },
    },
    expect: { entry: 'dist', port: '8080', probe: '/' },
  },
];
