/** Shared test helpers: a sandbox in a fresh temp directory, an invoke()-like execute, and polling. */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { createSandboxPlatform, type SandboxOptions } from '../../adapters/sandbox/index.js';
import type { Platform, WorkflowRun } from '../../core/ports.js';
import { submission } from './submission.js';

const dirs: string[] = [];
const platforms: Platform[] = [];

afterEach(async () => {
  await Promise.all(platforms.splice(0).map((p) => p.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A new empty directory, removed after the test. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pds-sandbox-'));
  dirs.push(dir);
  return dir;
}

/** Open a sandbox (closed after the test). */
export async function openSandbox(dataDir: string, options: Partial<SandboxOptions> = {}): Promise<Platform> {
  const platform = await createSandboxPlatform({ dataDir, domain: 'apps.test', stepMs: 5, githubAppSlug: 'pds-test', ...options });
  platforms.push(platform);
  return platform;
}

let counter = 0;

/** What the execute pipeline does: validate, submit the workflow with its audit entry. Returns the workflow name. */
export async function execute(
  platform: Platform,
  operation: string,
  parameters: Record<string, string>,
  userId = 'alice',
): Promise<string> {
  const name = `${operation}-${process.pid}-${++counter}`;
  await platform.workflows.submit(submission(name, operation, parameters, userId));
  return name;
}

/** Poll `probe` until it returns something truthy (or throw after `timeoutMs`). */
export async function waitFor<T>(probe: () => Promise<T> | T, what: string, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 3));
  }
}

/** Wait until the workflow is no longer `submitted`. */
export function settled(platform: Platform, name: string): Promise<WorkflowRun> {
  return waitFor(async () => {
    const run = await platform.workflows.get(name);
    return run && run.phase !== 'submitted' ? run : undefined;
  }, `workflow ${name} to settle`);
}

/** Execute and wait for the workflow to settle. */
export async function run(platform: Platform, operation: string, parameters: Record<string, string>, userId = 'alice'): Promise<WorkflowRun> {
  return settled(platform, await execute(platform, operation, parameters, userId));
}

export const ONBOARD = {
  action: 'onboard',
  team_name: 'acme',
  component_name: 'web',
  dockerfile_repo: 'acme/web',
  git_tag: '0.1.0',
  port: '8080',
  service_template: 'default',
};
