// The benchmark's section 1: the guarded payment as a ratio to the ideal guard, on an instance with the lab on and
// on one with it off, the two measured in the same turns. Each instance's ratio is read turn by turn (pairedRatio):
// its guarded turn against its ideal turn beside it.
//
// Why interleaved: measured one instance after the other, the lab-on instance always came first, on a database
// fresh from the orders' bulk insert, and the lab-off one a few minutes later; the two ratios then differed by 4% in
// one run and 14% in the next, while the lab's own CPU is about 3% of a payment's (2026-12-05). In turns, whatever
// the machine and the database do during the run falls on both instances alike.
import type { ChildProcess } from 'node:child_process';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { createOrders, freshPayments, medianTurn, postLoad } from './drive.ts';
import { BASE, type Load, log, PORTS, RATIO_SECONDS, RATIO_TURNS, SECONDS, WARMUP_SECONDS } from './plan.ts';

/**
 * Each instance's four routes, in the order each turn runs them (from where the turn starts): the ideal guard behind
 * the payments API's reading of the request, the guarded payment, the straight line (the guarded payment's own stores
 * called by hand: the yardstick decision 039 proposes for the targets), and the ideal guard bare (its body taken on
 * trust: what that reading costs; decision 038).
 */
export type Ratios = {
  ideal: Load;
  guarded: Load;
  bare: Load;
  straight: Load;
  idealLabOff: Load;
  guardedLabOff: Load;
  bareLabOff: Load;
  straightLabOff: Load;
};

/** An instance's load before its turn's measurements, after its stop: not measured. */
const SETTLE_SECONDS = 1;

type Instance = {
  process: ChildProcess;
  base: string;
  /** Its routes, the ideal first: each turn's measurements, side by side. */
  routes: Array<{ label: string; path: string; next: ReturnType<typeof freshPayments> }>;
};

/**
 * Both instances: `labOn` is running (at BASE); the lab-off one is `labOff`, started by the caller at PORTS.app + 1.
 * Only one instance runs at a time: the other is stopped (SIGSTOP), so that it takes no CPU of the machine's two
 * cores. Returns with both running.
 */
export async function measureRatios(options: {
  db: pg.Pool;
  redis: Redis;
  labOn: ChildProcess;
  labOff: ChildProcess;
}): Promise<Ratios> {
  const { db, redis } = options;
  // More fresh orders than the fastest route can use (800 a second): every measured payment is on a fresh order.
  const ratioRun = 800 * (RATIO_SECONDS + WARMUP_SECONDS + RATIO_TURNS * SETTLE_SECONDS);
  const warmedRun = 800 * 3 * SECONDS + ratioRun;
  const instance = async (process: ChildProcess, base: string, lab: string): Promise<Instance> => ({
    process,
    base,
    routes: [
      {
        label: `ideal guard (ioredis + pg), lab ${lab}`,
        path: '/api/bench/ideal',
        next: freshPayments(await createOrders(db, redis, ratioRun, null)),
      },
      {
        label: `POST /api/payments, all layers on, lab ${lab}`,
        path: '/api/payments',
        next: freshPayments(await createOrders(db, redis, warmedRun, null)),
      },
      {
        label: `straight line (the pipeline's stores by hand), lab ${lab}`,
        path: '/api/bench/straight-line',
        next: freshPayments(await createOrders(db, redis, ratioRun, null)),
      },
      {
        label: `ideal guard bare, lab ${lab}`,
        path: '/api/bench/bare',
        next: freshPayments(await createOrders(db, redis, ratioRun, null)),
      },
    ],
  });
  const instances = [
    await instance(options.labOn, BASE, 'on'),
    await instance(options.labOff, `http://127.0.0.1:${PORTS.app + 1}`, 'off'),
  ];
  const only = (running: Instance) => {
    for (const other of instances) if (other !== running) other.process.kill('SIGSTOP');
    running.process.kill('SIGCONT');
  };
  const load = (at: Instance, route: Instance['routes'][number], seconds: number) =>
    postLoad(route.path, route.next, { seconds, base: at.base });

  try {
    // Each instance warmed up alike: 3 × SECONDS of payments (the JIT's work and the modules loaded at first use
    // weigh the same on both), then a warm-up of each route.
    for (const at of instances) {
      only(at);
      const guarded = at.routes[1] as Instance['routes'][number];
      await load(at, guarded, 3 * SECONDS);
      for (const route of at.routes) await load(at, route, WARMUP_SECONDS);
    }
    // The turns: the instances' order alternates every turn, and the route each instance starts with moves on every
    // other turn, so that each route comes first in some turns (5 or 6 of 21 for three of them, 4 for the fourth) and
    // the routes run in one cycle from wherever it starts: the guarded payment beside the ideal in three rotations of
    // four, and beside the straight line in three (the targets' pair: decision 039).
    const measured = instances.map((at) => at.routes.map((): Load[] => []));
    for (let turn = 0; turn < RATIO_TURNS; turn++) {
      for (let k = 0; k < instances.length; k++) {
        const i = (turn + k) % instances.length;
        const at = instances[i] as Instance;
        only(at);
        for (let m = 0; m < at.routes.length; m++) {
          const r = (Math.floor(turn / 2) + m) % at.routes.length;
          // Back from its stop, an instance first settles (its pools' idle connections timed out meanwhile).
          if (m === 0) await load(at, at.routes[r] as Instance['routes'][number], SETTLE_SECONDS);
          measured[i]?.[r]?.push(
            await load(at, at.routes[r] as Instance['routes'][number], RATIO_SECONDS / RATIO_TURNS),
          );
        }
      }
      // A turn whose requests failed, or that completed none (an instance that hangs answers nothing, and fails
      // nothing either), measures nothing: the run stops rather than report a ratio from it.
      const failedTurn = measured.flat().find((runs) => {
        const last = runs.at(-1);
        return last !== undefined && (last.total === 0 || last.errors + last.non2xx > last.total / 10);
      });
      if (failedTurn) {
        const last = failedTurn.at(-1) as Load;
        throw new Error(
          `section 1, turn ${turn + 1}: ${last.total === 0 ? 'no request answered' : `${last.errors + last.non2xx} of ${last.total} requests failed`} (is an app instance down?)`,
        );
      }
      const line = measured.flatMap((routes, i) =>
        routes.map((runs, r) => {
          const { requestsPerSecond, errors, non2xx } = runs.at(-1) as Load;
          const failed = errors + non2xx > 0 ? ` (${errors + non2xx} failed)` : '';
          return `${instances[i]?.routes[r]?.label}: ${requestsPerSecond}${failed}`;
        }),
      );
      log(`turn ${turn + 1}: ${line.join('; ')}`);
    }
    const [[ideal, guarded, straight, bare], [idealLabOff, guardedLabOff, straightLabOff, bareLabOff]] = instances.map(
      (at, i) => at.routes.map((route, r) => medianTurn(route.label, measured[i]?.[r] ?? [])),
    ) as [[Load, Load, Load, Load], [Load, Load, Load, Load]];
    return { ideal, guarded, bare, straight, idealLabOff, guardedLabOff, bareLabOff, straightLabOff };
  } finally {
    for (const at of instances) at.process.kill('SIGCONT');
  }
}
