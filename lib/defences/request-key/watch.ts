import 'server-only';
// Waiting for a request key to change, for a duplicate that prefers to wait for the first request's outcome
// (`Prefer: wait=N`) rather than be told "in progress". The key's scripts PUBLISH on the key's own name when
// they change it (complete.lua: the outcome stored or put in doubt; release.lua: the claim given back), so a
// waiter is woken by the change itself, not by asking Redis again and again. One subscriber connection per
// process, shared by every waiter (a connection in subscriber mode can do nothing else); each key is
// subscribed while somebody waits on it. A notification can be lost (Redis restarted, a Sentinel failover
// under way, the subscription not yet active when the change came): the waiter asks again at least every
// three seconds anyway: a wait costs a few commands, whatever happens, and at worst 3 s of latency.
import { Cluster } from 'ioredis';
import { getRedis, type RedisClient } from '../../redis.ts';

/** However a wait goes, the waiter asks again at least this often (a lost notification costs this much). */
export const FALLBACK_MS = 3_000;

type Waiters = Map<string, Set<() => void>>;
type Subscriber = { client: RedisClient; waiters: Waiters };

// On globalThis: one per process, whichever bundle of Next.js asks for it.
const registry = globalThis as unknown as { requestKeyWatcher?: Subscriber };

function subscriber(): Subscriber {
  if (!registry.requestKeyWatcher) {
    // The same servers (one, a Sentinel's primary, a Cluster), on a connection of its own.
    const shared = getRedis();
    const client: RedisClient = shared instanceof Cluster ? shared.duplicate() : shared.duplicate();
    const waiters: Waiters = new Map();
    // A broken subscriber costs only latency: the waiters ask again within FALLBACK_MS.
    client.on('error', () => {});
    client.on('message', (channel: string) => {
      for (const wake of waiters.get(channel) ?? []) wake();
    });
    registry.requestKeyWatcher = { client, waiters };
  }
  return registry.requestKeyWatcher;
}

/** A key watched while somebody waits on it: `next(ms)` resolves at its next change (or one since the last call), or after `ms`. */
type Watch = { next(ms: number): Promise<void>; close(): Promise<void> };

async function watch(key: string): Promise<Watch> {
  const { client, waiters } = subscriber();
  let changed = false;
  let wake: (() => void) | undefined;
  const onChange = () => {
    changed = true;
    wake?.();
  };
  let set = waiters.get(key);
  if (!set) {
    set = new Set();
    waiters.set(key, set);
  }
  set.add(onChange);
  // Subscribed (SUBSCRIBE answered) before the caller asks again: a change after that question wakes it.
  if (set.size === 1) await client.subscribe(key).catch(() => {});
  const mine = set;
  return {
    async next(ms) {
      if (!changed) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, ms);
        });
        clearTimeout(timer);
        wake = undefined;
      }
      changed = false;
    },
    async close() {
      mine.delete(onChange);
      if (mine.size === 0 && waiters.get(key) === mine) {
        waiters.delete(key);
        await client.unsubscribe(key).catch(() => {});
      }
    },
  };
}

/**
 * Asks again (`ask`) each time the key changes, and at least every FALLBACK_MS, for as long as the answer is
 * "still running" and `waitMs` allows; then gives the last answer. The key is watched before the first new
 * question, so a change between the caller's first answer and the watch is not missed.
 */
export async function askUntilSettled<T>(
  key: string,
  waitMs: number,
  ask: () => Promise<T>,
  running: (answer: T) => boolean,
): Promise<T> {
  const deadline = Date.now() + waitMs;
  const watching = await watch(key);
  try {
    let answer = await ask();
    while (running(answer) && Date.now() < deadline) {
      await watching.next(Math.min(FALLBACK_MS, deadline - Date.now()));
      answer = await ask();
    }
    return answer;
  } finally {
    await watching.close();
  }
}
