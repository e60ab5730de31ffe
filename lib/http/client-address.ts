// The address a request comes from, for what costs per address (lib/http/rate-limit.ts): the socket's, which
// the Node server stamps on every request (lib/http/node-server.ts), never a header taken at its word. Behind
// a gateway named in TRUSTED_PROXIES (nginx in the cluster), the socket is the gateway's: then the client is
// the last hop of X-Forwarded-For that no trusted proxy added (a client may prepend any hops it likes; the
// gateway appends, or sets, the address it saw).
import { BlockList, isIP } from 'node:net';

/** The header the Node server sets to the socket's address, over anything a client sent under this name. */
export const PEER_HEADER = 'x-pay-once-peer';

type HeaderSource = { get(name: string): string | null };

/** `::ffff:10.0.0.7` (an IPv4 client on a dual-stack socket) is 10.0.0.7. */
function normalised(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return (mapped?.[1] ?? address).toLowerCase();
}

/** TRUSTED_PROXIES as a list: addresses (`127.0.0.1`, `::1`) and networks (`10.0.0.0/8`, `fd00::/8`). */
export function trustedProxies(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return list;
}

function isTrusted(address: string, trusted: BlockList): boolean {
  const family = isIP(address);
  return family !== 0 && trusted.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * The client's address: the peer's, or behind trusted proxies the last hop of X-Forwarded-For none of them
 * added. `trusted` undefined: no gateway is named (the default), nothing to look up.
 */
export function clientAddressOf(headers: HeaderSource, trusted: BlockList | undefined): string {
  const peer = normalised(headers.get(PEER_HEADER) ?? 'unknown');
  if (trusted === undefined || !isTrusted(peer, trusted)) return peer;
  const hops = (headers.get('x-forwarded-for') ?? '')
    .split(',')
    .map((hop) => normalised(hop.trim()))
    .filter(Boolean);
  for (let at = hops.length - 1; at >= 0; at--) {
    const hop = hops[at] ?? '';
    // Not an address at all: made up by the client in front of the first trusted proxy; the client is that proxy's peer.
    if (isIP(hop) === 0) return hops[at + 1] ?? peer;
    if (!isTrusted(hop, trusted)) return hop;
  }
  return hops[0] ?? peer;
}
