import 'server-only';
// The presenter steers the room (issue 29): "Set up exercise N for everyone" makes the exercise's preset the
// global lab, which every attendee without a lab of their own follows at once, and records it, so that an
// attendee who changed their own lab is told and can follow (their own lab is dropped: the session follows the
// global one again). A room reset clears the room's timeline, puts the global lab (the gateway's settings
// included) back to every defence on, and starts the room's counts again (double charges since the reset).
import { getBankDb, getDb } from '../db.ts';
import { getRedis } from '../redis.ts';
import type { CallerScope } from '../session.ts';
import { type Exercise, exerciseSettings, findExercise } from './exercises.ts';
import { getLabSettingsFor, MINE, resetLabSettings, updateLabSettings } from './settings-store.ts';
import { clearTimeline } from './timeline.ts';

/** The exercise the presenter set up for everyone, and when (ms since the epoch). */
export type RoomExercise = { id: string; at: number };

const EXERCISE_KEY = 'lab:room:exercise';
/** Since when the room counts (its last reset), ms since the epoch. */
const SINCE_KEY = 'lab:room:since';
/** A room lasts a day: the presenter's exercise is forgotten after that. */
const ROOM_TTL_SECONDS = 86_400;

export async function roomExercise(): Promise<RoomExercise | undefined> {
  const raw = await getRedis().get(EXERCISE_KEY);
  if (!raw) return undefined;
  try {
    const { id, at } = JSON.parse(raw) as Partial<RoomExercise>;
    return typeof id === 'string' && findExercise(id) && typeof at === 'number' ? { id, at } : undefined;
  } catch {
    return undefined;
  }
}

/** The presenter's "Set up exercise N for everyone": the global lab is the exercise's, whole. */
export async function setUpForEveryone(exercise: Exercise, now = Date.now()): Promise<RoomExercise> {
  await updateLabSettings(exerciseSettings(exercise));
  const set: RoomExercise = { id: exercise.id, at: now };
  await getRedis().set(EXERCISE_KEY, JSON.stringify(set), 'EX', ROOM_TTL_SECONDS);
  return set;
}

/** Whether a session follows the room (it has no lab of its own), and the room's exercise if any. */
export async function followingOf(session: CallerScope): Promise<{ follows: boolean; exercise?: RoomExercise }> {
  const [own, exercise] = await Promise.all([getRedis().exists(MINE(session)), roomExercise()]);
  return { follows: own === 0, ...(exercise ? { exercise } : {}) };
}

/** An attendee follows the room again: their own lab is dropped, and the global one is theirs. */
export async function followRoom(session: CallerScope) {
  await getRedis().del(MINE(session));
  return getLabSettingsFor(session);
}

/** The room's reset: its timeline, the global lab (gateway included) and its counts start again. */
export async function resetRoom(now = Date.now()): Promise<void> {
  await Promise.all([clearTimeline(), resetLabSettings(), getRedis().del(EXERCISE_KEY)]);
  await getRedis().set(SINCE_KEY, String(now), 'EX', ROOM_TTL_SECONDS);
}

/** Since when the room counts: its last reset, or a day ago. */
export async function roomSince(now = Date.now()): Promise<number> {
  const since = Number(await getRedis().get(SINCE_KEY));
  return Math.max(Number.isFinite(since) ? since : 0, now - ROOM_TTL_SECONDS * 1_000);
}

/** One attendee's progress through the exercise the room is on, from the bank's statement and their lab. */
export type AttendeeProgress = {
  attendee: string;
  /** An order of theirs charged more than once since the room's exercise was set up. */
  sawDoubleCharge: boolean;
  /** Their lab has the exercise's fix switched on (undefined: the exercise has no fix). */
  fixedIt?: boolean;
  /** An order of theirs charged exactly once, created after their last double charge. */
  paidOnce: boolean;
};

/** Every attendee (a browser session) whose card was charged since `since`, with what they have seen. */
export async function readProgress(exercise: Exercise | undefined, since: number): Promise<AttendeeProgress[]> {
  // From the statement's charges since then (its index on time), not a scan of every order; then their orders,
  // by key. Two statements: the bank's books may live in a database of their own (BANK_DATABASE_URL).
  const charged = await getBankDb().$queryRaw<Array<{ orderNo: string; charges: number }>>`
    SELECT merchant_ref AS "orderNo", count(*)::int AS charges FROM bank_charges
    WHERE created_at > ${new Date(since)}
    GROUP BY merchant_ref
    ORDER BY min(created_at)
    LIMIT 20000`;
  const chargesOf = new Map(charged.map((row) => [row.orderNo, row.charges]));
  const orders =
    charged.length === 0
      ? []
      : await getDb().$queryRaw<Array<{ orderNo: string; owner: string; created: Date }>>`
          SELECT order_no AS "orderNo", owner, created_at AS created FROM orders
          WHERE order_no = ANY(${[...chargesOf.keys()]}::text[]) AND owner LIKE 's.%'
          ORDER BY created_at
          LIMIT 5000`;
  const rows = orders.map((order) => ({ ...order, charges: chargesOf.get(order.orderNo) ?? 0 }));
  const byOwner = new Map<string, Array<{ created: number; charges: number }>>();
  for (const row of rows) {
    const orders = byOwner.get(row.owner) ?? [];
    orders.push({ created: row.created.getTime(), charges: row.charges });
    byOwner.set(row.owner, orders);
  }
  return Promise.all(
    [...byOwner].map(async ([owner, orders]) => {
      const doubles = orders.filter((order) => order.charges > 1);
      const lastDouble = Math.max(...doubles.map((order) => order.created), -1);
      const fix = exercise?.fix;
      const settings = fix ? await getLabSettingsFor(owner) : undefined;
      return {
        attendee: owner,
        sawDoubleCharge: doubles.length > 0,
        ...(fix && settings
          ? { fixedIt: Object.entries(fix).every(([layer, on]) => settings.layers[layer as keyof typeof fix] === on) }
          : {}),
        paidOnce: orders.some((order) => order.charges === 1 && order.created > lastDouble),
      };
    }),
  );
}
