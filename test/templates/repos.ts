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
    name: 'TypeScript server compiled by tsc alone, serving /health',
    template: 'javascript',
    repo: {
      paths: ['package.json', 'package-lock.json', 'tsconfig.json', 'src/server.ts'],
      contents: {
        'package.json': pkg({ name: 'quotes', scripts: { start: 'node dist/server.js' }, dependencies: { express: '^5' }, devDependencies: { typescript: '^5.9', '@types/express': '^5' } }),
        'src/server.ts': "import express from 'express';\n\nconst app = express();\napp.get('/health', (_req, res) => res.json({ ok: true }));\napp.listen(Number(process.env.PORT ?? 8787));\n",
      },
    },
    expect: { entry: 'dist/server.js', port: '8787', probe: '/health' },
  },
  {
    name: 'Express server serving /health and /healthz',
    template: 'javascript',
    repo: {
      paths: ['package.json', 'package-lock.json', 'server.js'],
      contents: {
        'package.json': pkg({ name: 'web', main: 'server.js', dependencies: { express: '^4.19.0' } }),
        'server.js': "const express = require('express');\nconst app = express();\napp.get('/health', (req, res) => res.json({ ok: true }));\napp.get(\"/healthz\", (req, res) => res.json({ ok: true }));\napp.listen(process.env.PORT || 8787);\n",
      },
    },
    expect: { entry: 'server.js', port: '8787', probe: '/healthz' },
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
    name: 'FastAPI app (app.main:app) serving /health',
    template: 'python',
    repo: {
      paths: ['requirements.txt', 'app/__init__.py', 'app/main.py'],
      contents: {
        'app/main.py': 'from fastapi import FastAPI\n\napp = FastAPI()\n\n\n@app.get("/health")\nasync def health() -> dict[str, bool]:\n    return {"ok": True}\n',
        'requirements.txt': 'fastapi==0.115.0\nuvicorn==0.30.0\n',
      },
    },
    expect: { entry: 'app.main:app', port: '8000', probe: '/health' },
  },
  {
    name: 'Flask app serving /ping',
    template: 'python',
    repo: {
      paths: ['requirements.txt', 'app.py'],
      contents: { 'app.py': "from flask import Flask\n\napp = Flask(__name__)\n\n@app.route('/ping', methods=['GET'])\ndef ping():\n    return {'ok': True}\n", 'requirements.txt': 'flask==3.1.0\n' },
    },
    expect: { entry: 'app:app', port: '8000', probe: '/ping' },
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
    name: 'Go net/http server serving /health',
    template: 'go',
    repo: {
      paths: ['go.mod', 'cmd/server/main.go'],
      contents: {
        'go.mod': 'module github.com/acme/inventory\n\ngo 1.24\n',
        'cmd/server/main.go': 'package main\n\nimport "net/http"\n\nfunc main() {\n\thttp.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"ok":true}`)) })\n\thttp.ListenAndServe(":8080", nil)\n}\n',
      },
    },
    expect: { entry: './cmd/server', port: '8080', probe: '/health' },
  },
  {
    name: 'Go ServeMux with a method pattern for /livez',
    template: 'go',
    repo: {
      paths: ['go.mod', 'main.go'],
      contents: { 'go.mod': 'module example.com/api\n\ngo 1.23\n', 'main.go': 'package main\n\nfunc main() {\n\tmux := http.NewServeMux()\n\tmux.HandleFunc("GET /livez", live)\n\tmux.HandleFunc("GET /orders/{id}", order)\n}\n' },
    },
    expect: { entry: '.', port: '8080', probe: '/livez' },
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
