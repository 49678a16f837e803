/**
 * Which IP addresses an outbound fetch a caller can steer may reach (issue 17 item 6): only public unicast ones.
 * Classification uses Node's own `net.BlockList`, which also matches an IPv4-mapped IPv6 address (`::ffff:7f00:1`)
 * against the IPv4 ranges. Ranges follow the IANA IPv4 and IPv6 Special-Purpose Address Registries
 * (https://www.iana.org/assignments/iana-ipv4-special-registry, …/iana-ipv6-special-registry).
 */
import { BlockList, isIP } from 'node:net';

/** The refused ranges, each with the name an error message gives it. */
const REFUSED: ReadonlyArray<{ name: string; family: 'ipv4' | 'ipv6'; network: string; prefix: number }> = [
  { name: 'unspecified or "this network"', family: 'ipv4', network: '0.0.0.0', prefix: 8 },
  { name: 'private (RFC 1918)', family: 'ipv4', network: '10.0.0.0', prefix: 8 },
  { name: 'shared address space (CGNAT, RFC 6598)', family: 'ipv4', network: '100.64.0.0', prefix: 10 },
  { name: 'loopback', family: 'ipv4', network: '127.0.0.0', prefix: 8 },
  { name: 'link-local', family: 'ipv4', network: '169.254.0.0', prefix: 16 },
  { name: 'private (RFC 1918)', family: 'ipv4', network: '172.16.0.0', prefix: 12 },
  { name: 'IETF protocol assignments', family: 'ipv4', network: '192.0.0.0', prefix: 24 },
  { name: 'documentation', family: 'ipv4', network: '192.0.2.0', prefix: 24 },
  { name: 'private (RFC 1918)', family: 'ipv4', network: '192.168.0.0', prefix: 16 },
  { name: 'benchmarking', family: 'ipv4', network: '198.18.0.0', prefix: 15 },
  { name: 'documentation', family: 'ipv4', network: '198.51.100.0', prefix: 24 },
  { name: 'documentation', family: 'ipv4', network: '203.0.113.0', prefix: 24 },
  { name: 'multicast', family: 'ipv4', network: '224.0.0.0', prefix: 4 },
  { name: 'reserved or broadcast', family: 'ipv4', network: '240.0.0.0', prefix: 4 },
  // ::/96 holds the unspecified address (::), loopback (::1) and the deprecated IPv4-compatible form (::7f00:1).
  { name: 'unspecified, loopback or IPv4-compatible', family: 'ipv6', network: '::', prefix: 96 },
  { name: 'IPv4-translated (may reach an internal IPv4 address)', family: 'ipv6', network: '::ffff:0:0:0', prefix: 96 },
  { name: 'NAT64 (may reach an internal IPv4 address)', family: 'ipv6', network: '64:ff9b::', prefix: 96 },
  { name: 'NAT64 local use', family: 'ipv6', network: '64:ff9b:1::', prefix: 48 },
  { name: 'discard-only', family: 'ipv6', network: '100::', prefix: 64 },
  { name: 'documentation', family: 'ipv6', network: '2001:db8::', prefix: 32 },
  { name: '6to4 (may reach an internal IPv4 address)', family: 'ipv6', network: '2002::', prefix: 16 },
  { name: 'unique-local', family: 'ipv6', network: 'fc00::', prefix: 7 },
  { name: 'link-local', family: 'ipv6', network: 'fe80::', prefix: 10 },
  { name: 'site-local (deprecated)', family: 'ipv6', network: 'fec0::', prefix: 10 },
  { name: 'multicast', family: 'ipv6', network: 'ff00::', prefix: 8 },
];

const lists = REFUSED.map(({ name, family, network, prefix }) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { name, list };
});

/**
 * Why an address may not be reached, or `undefined` when it is public unicast.
 * @param address an IP address as `dns.lookup` gives it or as a URL writes it (brackets allowed): `127.0.0.1`,
 *   `::ffff:7f00:1`, `[::1]`. The numeric spellings `127.1`, `2130706433` and `0x7f000001` are not addresses here:
 *   parse the URL first (WHATWG URL rewrites them all to `127.0.0.1`).
 * @returns the name of the refused range (e.g. `"loopback"`), or `"not an IP address"` for anything else, so a
 *   caller that forgot to resolve a name is refused rather than let through.
 * @example refusedRange('10.1.2.3') // 'private (RFC 1918)'
 * @example refusedRange('::ffff:127.0.0.1') // 'loopback'
 * @example refusedRange('93.184.215.14') // undefined
 */
export function refusedRange(address: string): string | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const version = isIP(bare);
  if (version === 0) return 'not an IP address';
  const family = version === 4 ? 'ipv4' : 'ipv6';
  return lists.find(({ list }) => list.check(bare, family))?.name;
}
