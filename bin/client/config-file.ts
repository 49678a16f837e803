/**
 * Where `pds login` keeps what it needs between runs: `$XDG_CONFIG_HOME/pds/config.json` (default
 * `~/.config/pds/config.json`), directory mode 0700, file mode 0600, written atomically (temp file, rename). It holds
 * the server's base URL and the tokens of the last sign-in to it; `PDS_TOKEN` and `--server`/`PDS_BASE_URL` override
 * what is read (`bin/client/session.ts`).
 */
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';

/** The stored sign-in. Times are epoch seconds. */
export const StoredConfig = z.object({
  /** Base URL of the pds signed in to, e.g. `https://pds.example.com`. */
  server: z.string(),
  accessToken: z.string().optional(),
  refreshToken: z.string().optional(),
  /** When the access token expires, epoch seconds. */
  expiresAt: z.number().optional(),
});
export type StoredConfig = z.infer<typeof StoredConfig>;

/** `$XDG_CONFIG_HOME/pds` or `~/.config/pds`. */
export function configDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(homedir(), '.config');
  return path.join(base, 'pds');
}

/** The config file's path. */
export function configFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(configDirectory(env), 'config.json');
}

/**
 * The stored configuration, or `undefined` when there is none.
 * @throws Error naming the file when it is not a pds config (so a broken file is never silently overwritten).
 */
export async function readConfig(env: NodeJS.ProcessEnv = process.env): Promise<StoredConfig | undefined> {
  const file = configFile(env);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const parsed = StoredConfig.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`${file} is not a pds configuration; remove it and run "pds login" again`);
  return parsed.data;
}

/** Replace the stored configuration (mode 0600, atomic). */
export async function writeConfig(config: StoredConfig, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const dir = configDirectory(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = configFile(env);
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, file);
}

/** Remove the stored configuration; nothing to remove is fine. */
export async function removeConfig(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  await rm(configFile(env), { force: true });
}
