// Which Host a request may name (DNS rebinding): a page on another site cannot read this app's answers,
// unless that site's name is made to resolve to this machine; then the browser sends that name as Host, and
// refusing it is what keeps the answers away from the other site's scripts. Allowed: loopback by any
// name, the address the app was told to listen on (HOST, unless it is a wildcard), and ALLOWED_HOSTS.
// Pure, but for hostAllowed(), which reads the configuration.

import { networkInterfaces } from 'node:os';
import { env } from '../env.ts';

/** A Host header's name (lowercase, IPv6 in brackets, without a trailing dot) and port, if any. */
export type HostName = { name: string; port?: string };

const REG_NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/;
const IPV6 = /^\[[0-9a-f:.]+\]$/;
const PORT = /^\d{1,5}$/;

/** Parses `name`, `name:port`, `[v6]` or `[v6]:port` (RFC 9110 §7.2); undefined for anything else. */
export function parseHost(value: string): HostName | undefined {
  const text = value.trim().toLowerCase();
  const colon = text.startsWith('[') ? text.indexOf(':', text.indexOf(']')) : text.indexOf(':');
  const name = colon === -1 ? text : text.slice(0, colon);
  const port = colon === -1 ? undefined : text.slice(colon + 1);
  if (port !== undefined && !PORT.test(port)) return undefined;
  if (!IPV6.test(name) && !REG_NAME.test(name)) return undefined;
  return { name: name.replace(/\.$/, ''), ...(port === undefined ? {} : { port }) };
}

/** Names that always mean this machine. */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Listen addresses that mean "every interface": no name of their own. */
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]', '*', '']);

export type HostPolicy = {
  /** The address the app listens on (env HOST). */
  host: string;
  /** env ALLOWED_HOSTS: names (any port) or name:port (that port only). */
  allowedHosts: readonly string[];
  /**
   * Listening on every interface: this machine's own addresses (what attendees type), any port. A function is
   * asked only when the name is none of the others (reading the interfaces costs more than the rest of the check).
   */
  ownAddresses?: readonly string[] | (() => readonly string[]);
};

/** HOST as a Host header would name it: an IPv6 address in brackets. */
function listenName(host: string): string | undefined {
  const text = host.trim().toLowerCase();
  if (WILDCARDS.has(text)) return undefined;
  if (text.includes(':') && !text.startsWith('[')) return `[${text}]`;
  return parseHost(text)?.name;
}

/** Whether a request naming `hostHeader` may be answered under `policy`. A missing or malformed Host is not. */
export function hostAllowedBy(hostHeader: string | null | undefined, policy: HostPolicy): boolean {
  if (hostHeader == null) return false;
  const host = parseHost(hostHeader);
  if (!host) return false;
  if (LOOPBACK.has(host.name)) return true;
  if (host.name === listenName(policy.host)) return true;
  const listed = policy.allowedHosts.some((entry) => {
    const allowed = parseHost(entry);
    if (!allowed || allowed.name !== host.name) return false;
    return allowed.port === undefined || allowed.port === host.port;
  });
  if (listed || !WILDCARDS.has(policy.host.trim().toLowerCase())) return listed;
  const own = typeof policy.ownAddresses === 'function' ? policy.ownAddresses() : policy.ownAddresses;
  return own?.includes(host.name) ?? false;
}

/** Whether this app answers a request naming `hostHeader` (its configuration: HOST and ALLOWED_HOSTS). */
export function hostAllowed(hostHeader: string | null): boolean {
  const { HOST, ALLOWED_HOSTS } = env();
  // Every API answer passes here: os.networkInterfaces() only for a name that is not loopback nor configured.
  return hostAllowedBy(hostHeader, { host: HOST, allowedHosts: ALLOWED_HOSTS, ownAddresses });
}

/** This machine's interface addresses, as a Host header names them (IPv6 in brackets). */
export function ownAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .flatMap((address) => (address ? [address.family === 'IPv6' ? `[${address.address}]` : address.address] : []));
}
