// REDIS_URL's Redis Cluster form, parsed without I/O (so it is unit-tested without servers):
//   redis-cluster://[user:password@]host:port,host:port,...      rediss-cluster://… for TLS
// The hosts are seed nodes: the client asks any of them for the cluster's map of slots and finds the rest.
// Written by hand because `new URL` refuses a comma-separated list of hosts.

export type RedisClusterNode = { host: string; port: number };

export type RedisClusterConfig = {
  nodes: RedisClusterNode[];
  username?: string;
  password?: string;
  tls: boolean;
};

const SCHEMES = { 'redis-cluster:': false, 'rediss-cluster:': true } as const;
const FORM = 'redis-cluster://host:port,host:port';

/** True when the URL names a Redis Cluster (its scheme), valid or not. */
export function isRedisClusterUrl(value: string): boolean {
  return /^rediss?-cluster:/i.test(value.trim());
}

export class InvalidClusterUrlError extends Error {}

function fail(reason: string): never {
  throw new InvalidClusterUrlError(`${reason} (the form is ${FORM})`);
}

function decode(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    fail(`the ${what} is not percent-encoded correctly`);
  }
}

function parseNode(entry: string): RedisClusterNode {
  // [IPv6]:port, or host:port (a host name or an IPv4 address).
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(entry);
  if (!match) fail(`"${entry}" is not host:port`);
  const [, bracketed = '', digits = ''] = match;
  const port = Number(digits);
  if (port < 1 || port > 65_535) fail(`port ${digits} is out of range`);
  const host = bracketed.startsWith('[') ? bracketed.slice(1, -1) : bracketed;
  if (host.startsWith('.') || host.endsWith('-') || host.includes('..')) fail(`"${host}" is not a host name`);
  return { host, port };
}

/** The cluster a redis-cluster:// URL names; throws InvalidClusterUrlError saying what is wrong. */
export function parseRedisClusterUrl(value: string): RedisClusterConfig {
  const url = value.trim();
  const schemeEnd = url.indexOf('//');
  const scheme = url.slice(0, schemeEnd).toLowerCase();
  if (schemeEnd < 0 || !(scheme in SCHEMES)) fail('it must start with redis-cluster:// or rediss-cluster://');
  let rest = url.slice(schemeEnd + 2);
  // Only "/" or "/0" may follow the hosts: a cluster has database 0 alone.
  const slash = rest.indexOf('/');
  if (slash >= 0) {
    const path = rest.slice(slash);
    if (!['/', '/0'].includes(path)) {
      fail(/^\/\d+$/.test(path) ? 'a Redis Cluster has only database 0' : `"${path}" may not follow the hosts`);
    }
    rest = rest.slice(0, slash);
  }
  let username: string | undefined;
  let password: string | undefined;
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    const credentials = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = credentials.indexOf(':');
    if (colon < 0) {
      password = decode(credentials, 'password'); // redis-cluster://secret@… as ioredis reads redis://secret@…
    } else {
      username = decode(credentials.slice(0, colon), 'user name') || undefined;
      password = decode(credentials.slice(colon + 1), 'password');
    }
    if (password === '') password = undefined;
  }
  const entries = rest.split(',').map((entry) => entry.trim());
  if (entries.length === 0 || entries.some((entry) => entry === '')) fail('it must name at least one host:port');
  const nodes = entries.map(parseNode);
  return { nodes, username, password, tls: SCHEMES[scheme as keyof typeof SCHEMES] };
}

/** Why a redis-cluster:// URL is invalid (one line), or undefined when it is valid. */
export function clusterUrlProblem(value: string): string | undefined {
  try {
    parseRedisClusterUrl(value);
    return undefined;
  } catch (error) {
    if (error instanceof InvalidClusterUrlError) return error.message;
    throw error;
  }
}
