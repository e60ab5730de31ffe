// The one place that reads process.env. Every variable is validated here; an invalid value stops
// start-up with one line per variable that names it and says what is wrong (see .env.example).
import { isIP } from 'node:net';
import { z } from 'zod';
import { clusterUrlProblem, isRedisClusterUrl } from './redis-cluster-url.ts';

const urlWithProtocol = (protocols: readonly string[]) =>
  z.string().refine(
    (value) => {
      try {
        return protocols.includes(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    { message: `must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}` },
  );

const port = z.coerce.number().int().min(1).max(65_535);
const positiveInt = z.coerce.number().int().positive();
const flag = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

/** A Sentinel's address: `host:port`, or `[IPv6 address]:port`. */
const SENTINEL_ADDRESS = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/;

/** `host:port,host:port`: the Sentinels to ask which server is the primary. */
const sentinelList = z.string().transform((list, ctx) => {
  const addresses: Array<{ host: string; port: number }> = [];
  for (const entry of list.split(',').map((part) => part.trim())) {
    const match = SENTINEL_ADDRESS.exec(entry);
    const portNumber = Number(match?.[3]);
    if (!match || portNumber < 1 || portNumber > 65_535) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a comma-separated list of host:port, one per Sentinel (${JSON.stringify(entry)} is not one)`,
      });
      return z.NEVER;
    }
    addresses.push({ host: match[1] ?? match[2] ?? '', port: portNumber });
  }
  return addresses;
});

const EnvFields = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** The app's HTTP port. */
  PORT: port.default(3000),
  /**
   * The address the app listens on. Loopback (the default) keeps the demo on this machine; any other address
   * (0.0.0.0, a LAN address) exposes it to a room, and then LAB_SECRET guards the presenter's actions.
   */
  HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * Host names the app answers to besides loopback and HOST (a DNS name, a reverse proxy's), comma-separated,
   * each with or without a port. A request naming any other Host is refused (DNS rebinding).
   */
  ALLOWED_HOSTS: z
    .string()
    .default('')
    .transform((list) =>
      list
        .split(',')
        .map((name) => name.trim().toLowerCase())
        .filter(Boolean),
    ),
  /** The presenter's secret (global lab settings, reset, the room view) when the app is exposed. At least 16 characters. */
  LAB_SECRET: z.string().min(16).optional(),
  /**
   * The key that signs session ids (HMAC-SHA256), at least 32 characters. `npm run demo` generates one on
   * first start and keeps it in DATA_DIR; unset elsewhere, each process makes its own (sessions end at restart).
   */
  SESSION_SECRET: z.string().min(32).optional(),
  /** PostgreSQL. Unset: `npm run demo` starts its own embedded server. */
  DATABASE_URL: urlWithProtocol(['postgres:', 'postgresql:']).optional(),
  /**
   * The simulated bank's own PostgreSQL (its card statements, refunds and fencing tokens), with the project's
   * migrations applied. Unset: the bank's tables live beside the merchant's, in DATABASE_URL. The bank is another
   * company's system: where the merchant's database fails over (README, deployment shapes), the bank's books must
   * not fail over with it. With it set, retention asks the bank's database for an unpaid order's charge, and
   * leaves the bank's rows to the bank.
   */
  BANK_DATABASE_URL: urlWithProtocol(['postgres:', 'postgresql:']).optional(),
  /**
   * Redis. Unset: `npm run demo` starts its own redis-server (unless REDIS_SENTINELS is set). A Redis Cluster:
   * `redis-cluster://host:port,host:port` (seed nodes; `rediss-cluster://` for TLS, `user:password@` before the
   * hosts), see lib/redis-cluster-url.ts.
   */
  REDIS_URL: z
    .string()
    .superRefine((value, context) => {
      const problem = isRedisClusterUrl(value)
        ? clusterUrlProblem(value)
        : urlWithProtocol(['redis:', 'rediss:']).safeParse(value).error?.issues[0]?.message;
      if (problem) context.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  /**
   * Redis through Sentinel, instead of REDIS_URL (never both): the Sentinels to ask which server is the
   * primary (`host:port,host:port`), and the name they monitor it under. The client follows a failover by
   * itself; what the old primary had not replicated is lost with it (docs/decisions/019-redis-failover.md).
   */
  REDIS_SENTINELS: sentinelList.optional(),
  REDIS_SENTINEL_NAME: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, {
      message: 'must be the name the Sentinels monitor the primary under (letters, digits, ".", "_" or "-")',
    })
    .optional(),
  /** Where the embedded services keep their data (git-ignored). */
  DATA_DIR: z.string().min(1).default('.data'),
  /** Ports of the embedded services that `npm run demo` starts (non-default, to leave yours alone). */
  EMBEDDED_POSTGRES_PORT: port.default(55432),
  EMBEDDED_REDIS_PORT: port.default(56379),
  /** This app instance's name, on the timeline and in attempt ids (cluster mode runs two). */
  INSTANCE_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,24}$/, { message: 'must be 1-24 letters, digits, "_" or "-"' })
    .optional(),
  /**
   * The background jobs of this instance: the reconciler (dead claims, unknown outcomes, the bank's settlement
   * report) and retention. Off on an instance that only serves requests while another runs them; every instance
   * runs them by default (they are safe side by side).
   */
  BACKGROUND_JOBS: flag.default(true),
  /** The lab's routes and page. On in the demo; turn off where the lab must not be reachable. */
  LAB_ENABLED: flag.default(true),
  /**
   * An OTLP/HTTP collector (Jaeger, Tempo, an OpenTelemetry Collector) that receives every span: the
   * payments', their defences', and Next.js's own for the routes. `/v1/traces` is appended. Unset: no export.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  /** The service name those spans carry. */
  OTEL_SERVICE_NAME: z.string().min(1).default('pay-once'),
  /** The benchmark's routes (/api/bench/*) and round-trip counters. Only `npm run bench` turns them on. */
  BENCH_ROUTES: flag.default(false),
  /** Layer 1: lifetime of a one-time checkout token. */
  CHECKOUT_TOKEN_TTL_SECONDS: positiveInt.default(300),
  /** Every claim's lease (the lab's default `claims.leaseMs`): unrenewed this long, it may be taken over. */
  REQUEST_KEY_LEASE_MS: positiveInt.min(100).max(600_000).default(30_000),
  /** Layer 2: how long a final outcome is kept and replayed. */
  REQUEST_KEY_RESULT_TTL_SECONDS: positiveInt.default(86_400),
  /**
   * Requests per minute one caller may make (a session, an X-Client-Id, or, for a caller that names none, its
   * address): order creation and payments (the Pay button included). 0 turns the limit off (the test suite's
   * load runs do; a hostile test checks the limit itself).
   */
  RATE_LIMIT_ORDERS_PER_MINUTE: z.coerce.number().int().min(0).default(60),
  RATE_LIMIT_PAYMENTS_PER_MINUTE: z.coerce.number().int().min(0).default(120),
  /**
   * How many callers' worth one client address may spend (its socket's address, or the client behind a
   * TRUSTED_PROXIES gateway): a new X-Client-Id or a fresh session costs nothing, an address does. 10: an
   * address makes at most 600 orders and 1,200 payments a minute, however many callers it names.
   */
  RATE_LIMIT_CALLERS_PER_ADDRESS: z.coerce.number().int().positive().default(10),
  /**
   * The gateways in front of the app whose X-Forwarded-For is believed (addresses or networks, comma-separated:
   * `127.0.0.1,10.0.0.0/8`). Unset: the client is the socket's peer, whatever headers it sends.
   */
  TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((list, ctx) => {
      const entries = list
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean);
      for (const entry of entries) {
        const [address = '', prefix, ...rest] = entry.split('/');
        const family = isIP(address);
        const bits = family === 6 ? 128 : 32;
        const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
        if (family === 0 || !prefixOk || rest.length > 0) {
          ctx.addIssue({
            code: 'custom',
            message: `must be a comma-separated list of IP addresses or networks (${JSON.stringify(entry)} is not one)`,
          });
          return z.NEVER;
        }
      }
      return entries;
    }),
  /**
   * Days a settled order (with its charges, dedup rows, outbox row and receipts) is kept before the hourly
   * retention job deletes it: layer 4's cleanup too, since a dedup row lives as long as its order. 0 keeps
   * everything (the test suite).
   */
  RETENTION_DAYS: z.coerce.number().int().min(0).default(30),
});

export const EnvSchema = EnvFields.superRefine((env, ctx) => {
  // One way to reach Redis: a URL, or Sentinels with the primary's name (both of them).
  if (env.REDIS_SENTINELS && !env.REDIS_SENTINEL_NAME) {
    ctx.addIssue({
      code: 'custom',
      path: ['REDIS_SENTINEL_NAME'],
      message: 'is required with REDIS_SENTINELS: the name the Sentinels monitor the primary under (e.g. mymaster)',
    });
  }
  if (env.REDIS_SENTINEL_NAME && !env.REDIS_SENTINELS) {
    ctx.addIssue({
      code: 'custom',
      path: ['REDIS_SENTINELS'],
      message: 'is required with REDIS_SENTINEL_NAME: the Sentinels to ask, as host:port,host:port',
    });
  }
  // Named on REDIS_SENTINELS, so the error line never prints REDIS_URL (it may carry a password).
  if (env.REDIS_SENTINELS && env.REDIS_URL) {
    ctx.addIssue({
      code: 'custom',
      path: ['REDIS_SENTINELS'],
      message: 'cannot be used with REDIS_URL: set one way to reach Redis (unset REDIS_URL to go through Sentinel)',
    });
  }
});

export type Env = z.infer<typeof EnvSchema>;

export class InvalidEnvError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid environment: ${problems.join('; ')}`);
    this.name = 'InvalidEnvError';
  }
}

/** Parses a set of variables; throws InvalidEnvError with one line per invalid variable. */
export function parseEnv(source: Record<string, string | undefined>): Env {
  // An empty string means "unset", as in most .env loaders.
  const defined = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== ''));
  const result = EnvSchema.safeParse(defined);
  if (result.success) return result.data;
  throw new InvalidEnvError(
    result.error.issues.map((issue) => {
      const name = issue.path.join('.');
      const got = source[name];
      return `${name}: ${issue.message}${got === undefined ? '' : ` (got ${JSON.stringify(got)})`}`;
    }),
  );
}

let cached: Env | undefined;

/** The validated environment of this process. */
export function env(): Env {
  cached ??= parseEnv(process.env);
  return cached;
}

/** A variable that must be set by now (the launcher sets the service URLs before the app starts). */
export function requireEnv<K extends 'DATABASE_URL' | 'REDIS_URL'>(name: K): string {
  const value = env()[name];
  if (!value) {
    const nor = name === 'REDIS_URL' ? 'nor REDIS_SENTINELS; ' : '';
    throw new InvalidEnvError([`${name}: is not set (${nor}start the app with \`npm run demo\`)`]);
  }
  return value;
}
