/**
 * `pds login`: sign in to a pds and keep the tokens (`bin/client/config-file.ts`). openid-client drives pds's
 * authorization server as the built-in native client `pds-cli`:
 *
 * - default: authorization code with PKCE S256, the redirect caught on a loopback port (RFC 8252), the browser opened
 *   with `open` (or not, `--no-browser`: the URL is always printed);
 * - `--device`: for a remote shell, the device flow (RFC 8628): open the printed URL on any machine and confirm the code.
 *
 * The person signs in upstream (Dex or GitHub, as the server offers) and allows `pds-cli` on pds's consent page.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Command, Option } from 'commander';
import open from 'open';
import ora from 'ora';
import * as oidc from 'openid-client';
import { decodeJwt } from 'jose';
import { readConfig } from '../client/config-file.js';
import { CliError } from '../client/errors.js';
import { LOGIN_SCOPES, authorizationServer, saveTokens, serverUrl } from '../client/session.js';

/** How long to wait for the browser or the device confirmation, seconds. */
const WAIT_SECONDS = 300;

/** Wait for the browser's redirect to the loopback callback; resolves with the URL it arrived at. */
async function loopbackRedirect(state: string): Promise<{ redirectUri: string; arrival: Promise<URL>; close: () => void }> {
  let settle!: (url: URL) => void;
  let fail!: (err: Error) => void;
  const arrival = new Promise<URL>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback' || url.searchParams.get('state') !== state) {
      res.writeHead(404).end();
      return;
    }
    const ok = !url.searchParams.has('error');
    res.writeHead(ok ? 200 : 400, { 'content-type': 'text/html; charset=utf-8', connection: 'close' });
    res.end(`<!DOCTYPE html><title>pds</title><p>${ok ? 'Signed in. You can close this window and go back to the terminal.' : 'Sign-in did not complete; see the terminal.'}</p>`);
    settle(new URL(url.pathname + url.search, `http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
  server.on('error', fail);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const timer = setTimeout(() => fail(new CliError(`no sign-in within ${WAIT_SECONDS / 60} minutes; run "pds login" again`)), WAIT_SECONDS * 1000);
  return {
    redirectUri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    arrival,
    close: () => {
      clearTimeout(timer);
      server.closeAllConnections();
      server.close();
    },
  };
}

async function browserLogin(as: oidc.Configuration, server: string, scope: string, openBrowser: boolean): Promise<oidc.TokenEndpointResponse> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const callback = await loopbackRedirect(state);
  try {
    const url = oidc.buildAuthorizationUrl(as, {
      redirect_uri: callback.redirectUri,
      scope,
      resource: server,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    process.stderr.write(`Sign in at:\n  ${url.href}\n`);
    if (openBrowser) await open(url.href).catch(() => process.stderr.write('(could not open a browser: open the address above)\n'));
    const spinner = ora({ text: 'Waiting for the sign-in in the browser…', stream: process.stderr }).start();
    let arrived: URL;
    try {
      arrived = await callback.arrival;
    } finally {
      spinner.stop();
    }
    return await oidc.authorizationCodeGrant(as, arrived, { pkceCodeVerifier: verifier, expectedState: state }, { resource: server });
  } finally {
    callback.close();
  }
}

async function deviceLogin(as: oidc.Configuration, server: string, scope: string): Promise<oidc.TokenEndpointResponse> {
  const device = await oidc.initiateDeviceAuthorization(as, { scope, resource: server });
  process.stderr.write(`On any device, open:\n  ${device.verification_uri_complete ?? device.verification_uri}\nand check that it shows the code ${device.user_code}\n`);
  const spinner = ora({ text: 'Waiting for the confirmation…', stream: process.stderr }).start();
  try {
    return await oidc.pollDeviceAuthorizationGrant(as, device, { resource: server }, { signal: AbortSignal.timeout(WAIT_SECONDS * 1000) });
  } finally {
    spinner.stop();
  }
}

/**
 * Fail fast when the server has no sign-in method: request an authorization as the browser would (a throwaway one,
 * its loopback redirect never used), follow it to pds's sign-in page asking for JSON, and stop with the server's reason
 * when that page answers 503 (`rest/oauth-routes.ts`). Any other answer — or none — lets the real sign-in go ahead, so
 * this check never blocks a sign-in that could work.
 * @throws CliError with the server's reason when it has no sign-in method.
 */
async function requireSignInMethod(as: oidc.Configuration, server: string, scope: string): Promise<void> {
  let at = oidc.buildAuthorizationUrl(as, {
    redirect_uri: 'http://127.0.0.1/callback',
    scope,
    resource: server,
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
    state: oidc.randomState(),
  }).href;
  const cookies = new Map<string, string>();
  try {
    // A few hops at most: authorization endpoint → interaction page (→ one upstream's sign-in when there is one).
    for (let hop = 0; hop < 3; hop++) {
      const res = await fetch(at, {
        redirect: 'manual',
        headers: { accept: 'application/json', cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
        signal: AbortSignal.timeout(10_000),
      });
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const eq = pair!.indexOf('=');
        if (eq > 0) cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
      }
      const next = res.headers.get('location');
      if (res.status === 503) {
        const body = (await res.json().catch(() => ({}))) as { error?: string };
        throw new CliError(`cannot sign in to ${server}: ${body.error ?? 'the server has no sign-in method (HTTP 503)'}`);
      }
      await res.body?.cancel();
      // Only pds's own pages are followed: an upstream (Dex, GitHub) means a sign-in method exists.
      if (!next || new URL(next, at).origin !== new URL(server).origin) return;
      at = new URL(next, at).href;
    }
  } catch (err) {
    if (err instanceof CliError) throw err;
  }
}

/** An OAuth refusal from openid-client as a person reads it. */
function refusal(err: unknown): Error {
  if (err instanceof CliError) return err;
  const e = err as { error?: string; error_description?: string; message?: string };
  return new CliError(`sign-in failed: ${e.error ? `${e.error}${e.error_description ? ` (${e.error_description})` : ''}` : e.message}`);
}

export function loginCommand() {
  return new Command('login')
    .summary('sign in (browser; --device on a remote shell)')
    .description('Sign in to a pds in the browser and keep the tokens in $XDG_CONFIG_HOME/pds (~/.config/pds).')
    .addOption(new Option('--server <url>', 'pds base URL (default: $PDS_BASE_URL, else the last one, else http://localhost:8080)'))
    .option('--device', 'sign in from another device: print a URL and a code instead of catching a redirect here')
    .option('--no-browser', 'print the sign-in URL without opening a browser')
    .option('--scope <scopes>', 'space-separated scopes to ask for (pds:read, pds:write, pds:admin)', LOGIN_SCOPES)
    .action(async (o: { server?: string; device?: boolean; browser: boolean; scope: string }) => {
      const server = serverUrl(o.server, await readConfig());
      const as = await authorizationServer(server);
      await requireSignInMethod(as, server, o.scope);
      let tokens: oidc.TokenEndpointResponse;
      try {
        tokens = o.device ? await deviceLogin(as, server, o.scope) : await browserLogin(as, server, o.scope, o.browser);
      } catch (err) {
        throw refusal(err);
      }
      await saveTokens(server, tokens);
      const claims = decodeJwt(tokens.access_token);
      process.stderr.write(`Signed in to ${server} as ${claims.sub} (${claims.scope || 'no scope'}).\n`);
    });
}
