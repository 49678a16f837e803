/**
 * Running what the image runs (test/artifact/image.ts lays it out): a program in the image's WORKDIR with exactly the
 * environment given, the tree's own `token` command, and the environment a Kubernetes manifest gives its container.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { expect } from 'vitest';
import type { ImageLayout } from './image.js';

/** The image's program: `node` is the Node running this test (the image's is checked by the base image's tag). */
export const program = (argv: string[]) => (argv[0] === 'node' ? [process.execPath, ...argv.slice(1)] : argv);

/** A started server: its base URL (`http://127.0.0.1:<PORT>`), the environment it got, its output so far, its exit. */
export interface Running {
  url: string;
  env: Record<string, string>;
  child: ChildProcess;
  output(): string;
  exited: Promise<number | NodeJS.Signals | null>;
}

/** Run `argv` in the image's WORKDIR with exactly `env` (plus PATH); resolves once /readyz answers 200. */
export async function run(image: ImageLayout, argv: string[], env: Record<string, string>, ready = '/readyz'): Promise<Running> {
  const [command, ...args] = program(argv);
  const child = spawn(command!, args, { cwd: image.workdir, env: { PATH: process.env.PATH!, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d));
  child.stderr!.on('data', (d: Buffer) => (output += d));
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  let gone = false;
  void exited.then(() => (gone = true));
  const url = `http://127.0.0.1:${env.PORT}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (gone) throw new Error(`${argv.join(' ')} exited before ${ready} answered 200:\n${output}`);
    const status = await fetch(url + ready).then((r) => r.status, () => 0);
    if (status === 200) return { url, env, child, output: () => output, exited };
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${ready} did not answer 200 within 60 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The tree's own `token` command, run as the CMD's program with the server's environment. */
export function token(image: ImageLayout, server: Running, user: string): string {
  const entry = image.cmd.find((a) => a.startsWith('dist/'))!;
  const [command, ...args] = program(['node', entry, 'token', '--user', user]);
  const result = spawnSync(command!, args, { cwd: image.workdir, env: { PATH: process.env.PATH!, ...server.env }, encoding: 'utf8' });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout.trim();
}

/** One JSON request with a bearer token; the status and the parsed body. */
export async function api(server: Running, bearer: string, method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(server.url + p, {
    method,
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/**
 * Wait for a workflow through the API's own long poll (`wait_seconds`: answers once settled, or at the deadline), for at
 * most 60 s; returns its audit status (`succeeded`, `failed`, or `submitted` when the deadline passed).
 */
export async function settled(server: Running, bearer: string, name: string): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await api(server, bearer, 'GET', `/api/v1/workflows/${name}?wait_seconds=30`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (res.body.audit.status !== 'submitted' || Date.now() > deadline) return res.body.audit.status;
  }
}

/** SIGTERM; resolves with the exit code (or signal). */
export async function stop(server: Running): Promise<number | NodeJS.Signals | null> {
  server.child.kill('SIGTERM');
  return server.exited;
}

/** A manifest's pds container: what it runs and with which environment, Secrets and ConfigMaps resolved from `docs`. */
function containerOf(files: string[]) {
  const docs = files.flatMap((f) => parseAllDocuments(readFileSync(f, 'utf8')).map((d) => d.toJS()));
  const deployment = docs.find((d) => d?.kind === 'Deployment' && d.metadata.name === 'pds');
  const container = deployment.spec.template.spec.containers.find((c: { name: string }) => c.name === 'pds');
  const secrets = new Map<string, Record<string, string>>(
    docs.filter((d) => d?.kind === 'Secret').map((d) => [d.metadata.name, d.stringData ?? {}]),
  );
  const configMaps = new Map<string, Record<string, string>>(docs.filter((d) => d?.kind === 'ConfigMap').map((d) => [d.metadata.name, d.data]));
  return { container, secrets, configMaps };
}

/**
 * The container's environment as the kubelet gives it: `envFrom` ConfigMaps, then `env` (values, Secret keys, pod
 * fields). `given` supplies what the cluster holds outside the manifests (Secrets created with kubectl); paths under a
 * volume mount move to `mounts[mountPath]`.
 */
export function environmentOf(image: ImageLayout, files: string[], given: Record<string, string>, mounts: Record<string, string>): { argv: string[]; env: Record<string, string> } {
  const { container, secrets, configMaps } = containerOf(files);
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) Object.assign(env, configMaps.get(from.configMapRef.name));
  for (const entry of container.env ?? []) {
    if ('value' in entry) env[entry.name] = String(entry.value);
    else if (entry.valueFrom.secretKeyRef) {
      const { name, key } = entry.valueFrom.secretKeyRef;
      env[entry.name] = secrets.get(name)?.[key] ?? given[entry.name]!;
      expect(env[entry.name], `${entry.name} from Secret ${name}`).toBeDefined();
    } else if (entry.valueFrom.fieldRef) env[entry.name] = { 'metadata.name': 'pds-0', 'metadata.namespace': 'pds' }[entry.valueFrom.fieldRef.fieldPath as string]!;
  }
  for (const [name, value] of Object.entries(env)) {
    for (const [mountPath, local] of Object.entries(mounts)) if (value.startsWith(`${mountPath}/`)) env[name] = local + value.slice(mountPath.length);
  }
  // No command or args: the container runs the image's ENTRYPOINT and CMD.
  expect(container.command).toBeUndefined();
  expect(container.args).toBeUndefined();
  return { argv: image.cmd, env: { ...image.env, ...env } };
}

