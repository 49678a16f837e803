/**
 * Where a webhook may point (issue 20 item 5): the outbound rule of `adapters/outbound/fetch.ts`, checked when a hook
 * is set and again by that fetch at each delivery. `https` only, to a host whose every address is public unicast
 * (`adapters/outbound/address.ts`); with `PDS_OUTBOUND_ALLOW_PRIVATE=true` also `http`, to any address (loopback
 * receivers in tests, an on-premise chat server).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { InvalidParams } from '../../core/errors.js';
import { refusedRange } from '../outbound/address.js';

/** Name resolution with every address (default `dns.lookup` with `all: true`). */
export type ResolveAddresses = (hostname: string) => Promise<string[]>;

const resolveAll: ResolveAddresses = async (hostname) => (await lookup(hostname, { all: true })).map((a) => a.address);

/**
 * Why `url` may not receive webhooks by its scheme alone, or `undefined`.
 */
export function schemeProblem(url: URL, allowPrivate: boolean): string | undefined {
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && allowPrivate) return undefined;
  return `webhook URLs must be https (http only when the operator sets PDS_OUTBOUND_ALLOW_PRIVATE=true), not ${url.protocol}`;
}

/**
 * Check a hook's URL: scheme, then (unless private addresses are allowed) every address its host resolves to.
 * @throws InvalidParams saying what is wrong and what is allowed.
 */
export async function checkDestination(text: string, options: { allowPrivate: boolean; resolve?: ResolveAddresses }): Promise<void> {
  const url = new URL(text);
  const scheme = schemeProblem(url, options.allowPrivate);
  if (scheme) throw new InvalidParams(`${scheme}: ${url.origin}`);
  if (url.username || url.password) throw new InvalidParams('webhook URLs may not carry a user name or password; put a token in the path or query');
  if (options.allowPrivate) return;
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await (options.resolve ?? resolveAll)(host);
  } catch (err) {
    throw new InvalidParams(`webhook host ${host} does not resolve: ${(err as Error).message}`);
  }
  for (const address of addresses) {
    const range = refusedRange(address);
    if (range) {
      throw new InvalidParams(
        `webhooks may only reach public addresses: ${host} is ${address === host ? '' : `${address}, `}${range} ` +
          '(an operator can allow private addresses with PDS_OUTBOUND_ALLOW_PRIVATE=true)',
      );
    }
  }
}
