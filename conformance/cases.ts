// The cases the kit checks, each named, each with the evidence a reader needs when it fails: what was sent, what
// came back, how many times the side effect happened. Three groups:
//   draft        the semantics of draft-ietf-httpapi-idempotency-key-header (and Stripe's): a missing or malformed
//                key, the key reused with another body, a retry while the first runs, an exact replay, keys scoped
//                per caller, the key's spellings, errors as problem+json;
//   concurrency  twenty requests at once with one key, twenty keys for one intent, a burst after a timeout;
//   recovery     a client that times out and retries, a retry after the answer was lost.
// A case that needs what the adapter cannot do (slow the side effect, count it, name callers) is skipped, saying so.
import type { Adapter, KitResponse, Subject } from './adapter.ts';

type Answered = Extract<KitResponse, { kind: 'answered' }>;

import { isSuccess, jsonOf, sleep, statusOf, told } from './http.ts';

/** What a case may do: make subjects, send their requests, count their side effects. */
export type CaseKit = {
  adapter: Adapter;
  /** How long a slowed side effect takes (the adapter's `slowMs`). */
  slowMs: number;
  /** A new intent, of a caller of its own (or `caller`), slowed if asked and the adapter can. */
  subject(options?: { slow?: boolean; caller?: string }): Promise<OwnSubject>;
  /** A key no other request of the run uses. */
  key(): string;
  /** Sends the subject's request: with `key` as an sf-string, `rawKey` as written, or no key at all (null). */
  send(subject: OwnSubject, options: SendOptions): Promise<KitResponse>;
};
export type OwnSubject = Subject & { caller: string };
export type SendOptions = {
  key: string | null;
  rawKey?: string;
  body?: Record<string, unknown>;
  headers?: Record<string, string>;
  timeoutMs?: number;
};

export type Need = 'slow' | 'count' | 'callers' | 'bodyNamesTheIntent';
export type CaseGroup = 'draft' | 'concurrency' | 'recovery';

export type Case = {
  name: string;
  group: CaseGroup;
  /** What it checks, in one line. */
  title: string;
  needs?: Need[];
  run(kit: CaseKit, verdict: Verdict): Promise<void>;
};

/** What a case found: its evidence, its notes, and whether every check held. */
export class Verdict {
  readonly evidence: string[] = [];
  readonly notes: string[] = [];
  failed = false;
  sideEffects: number | undefined;

  /** A check that the answer is a success (2xx): `line` is evidence either way. */
  success(answer: KitResponse | undefined, line: string): answer is Answered {
    return this.check(answer !== undefined && isSuccess(answer), line);
  }

  /** A check: `line` is evidence either way, marked ✗ when the check failed. */
  check(holds: boolean, line: string): boolean {
    this.evidence.push(`${holds ? '✓' : '✗'} ${line}`);
    if (!holds) this.failed = true;
    return holds;
  }

  /** Worth knowing, not a failure (a header the draft recommends, a preference the server may ignore). */
  note(line: string): void {
    this.notes.push(line);
  }

  /** The subject's side effects, checked against `expected` where the adapter can count them. */
  async effects(subject: Subject, expected: number, why = ''): Promise<void> {
    if (!subject.sideEffects) return;
    const seen = await subject.sideEffects();
    this.sideEffects = (this.sideEffects ?? 0) + seen;
    this.check(seen === expected, `side effects: ${seen} (expected ${expected}${why ? `: ${why}` : ''})`);
  }
}

/** Retries with the same key until an answer that is not "in progress" (409) nor none, honouring Retry-After up to 1 s. */
async function untilFinal(
  kit: CaseKit,
  subject: OwnSubject,
  options: SendOptions,
  tries = 20,
): Promise<{ last: KitResponse; answers: KitResponse[] }> {
  const answers: KitResponse[] = [];
  for (let i = 0; i < tries; i++) {
    const answer = await kit.send(subject, options);
    answers.push(answer);
    if (answer.kind === 'answered' && answer.status !== 409) return { last: answer, answers };
    const after = answer.kind === 'answered' ? Number(answer.headers['retry-after']) : Number.NaN;
    await sleep(Number.isFinite(after) ? Math.min(after * 1_000, 1_000) : 300);
  }
  return { last: answers.at(-1) as KitResponse, answers };
}

/** Two answers are the same answer: the same status, the same body (as JSON, or as text). */
function sameAnswer(a: KitResponse, b: KitResponse): boolean {
  if (a.kind !== 'answered' || b.kind !== 'answered' || a.status !== b.status) return false;
  const [x, y] = [jsonOf(a), jsonOf(b)];
  return x === undefined || y === undefined ? a.text === b.text : JSON.stringify(x) === JSON.stringify(y);
}

const summary = (answers: KitResponse[]) => {
  const counts = new Map<string, number>();
  for (const answer of answers) {
    const shown = answer.kind === 'answered' ? String(answer.status) : 'no answer';
    counts.set(shown, (counts.get(shown) ?? 0) + 1);
  }
  return [...counts].map(([status, n]) => `${n}× ${status}`).join(', ');
};

/** How many times a pair that reached the server the other way round is sent again, for a new subject and key. */
const OVERLAP_TRIES = 3;

/**
 * Two requests with one key for a new slowed subject, the second sent `lead` ms after the first, while the first
 * still runs. Which of the two the server sees first is the network's and its scheduler's choice, not the kit's:
 * on a busy machine the second has been seen first (the first sent then refused 409 while the second ran, both
 * right). A pair that went the other way round judges nothing the case asks, so it is sent again, for a new
 * subject and key, up to OVERLAP_TRIES times, and noted; the last pair is judged whatever its order.
 */
async function overlapping(
  kit: CaseKit,
  v: Verdict,
  second: Omit<SendOptions, 'key'>,
  lead = 300,
): Promise<{ subject: OwnSubject; first: KitResponse; second: KitResponse }> {
  for (let attempt = 1; ; attempt++) {
    const subject = await kit.subject({ slow: true });
    const key = kit.key();
    const firstAnswer = kit.send(subject, { key });
    await sleep(lead);
    const secondAnswer = await kit.send(subject, { ...second, key });
    const first = await firstAnswer;
    const swapped = statusOf(first) === 409 && isSuccess(secondAnswer);
    if (!swapped || attempt === OVERLAP_TRIES) return { subject, first, second: secondAnswer };
    v.note(`the second request was seen first (the first sent was told 409): sent again for a new subject`);
  }
}

/** Malformed spellings of a key, each of which the draft's syntax (one sf-string Item) refuses. */
export const MALFORMED_KEYS = [
  'key,with,commas,longer-than-twenty-chars',
  '"first-key", "second-key"',
  '"key";expires=1',
  '"unterminated',
  '""',
  '"ünïcode"',
];

export const CASES: Case[] = [
  {
    name: 'missing-key',
    group: 'draft',
    title: 'a request without the key is refused with 400, and does nothing',
    async run(kit, v) {
      const subject = await kit.subject();
      const answer = await kit.send(subject, { key: null });
      v.check(statusOf(answer) === 400, `no key: ${told(answer)} (expected 400)`);
      await v.effects(subject, 0);
    },
  },
  {
    name: 'malformed-key',
    group: 'draft',
    title: 'a key that is not one sf-string (a list, parameters, bad quoting, empty, non-ASCII) is refused with 400',
    async run(kit, v) {
      const subject = await kit.subject();
      for (const rawKey of MALFORMED_KEYS) {
        const answer = await kit.send(subject, { key: null, rawKey });
        v.check(statusOf(answer) === 400, `${kit.adapter.keyHeader ?? 'Idempotency-Key'}: ${rawKey} → ${told(answer)}`);
      }
      await v.effects(subject, 0);
    },
  },
  {
    name: 'key-reused-with-another-body',
    group: 'draft',
    title: 'the same key with a different body is refused with 422, and does nothing more',
    async run(kit, v) {
      const subject = await kit.subject();
      const key = kit.key();
      const first = await kit.send(subject, { key });
      if (!v.success(first, `first: ${told(first)}`)) return;
      const other = await kit.send(subject, { key, body: subject.otherBody });
      v.check(statusOf(other) === 422, `same key, another body: ${told(other)} (expected 422)`);
      await v.effects(subject, 1);
    },
  },
  {
    name: 'exact-replay',
    group: 'draft',
    title: 'a retry after the first finished gets the same status and body, and does nothing more',
    async run(kit, v) {
      const subject = await kit.subject();
      const key = kit.key();
      const first = await kit.send(subject, { key });
      if (!v.success(first, `first: ${told(first)}`)) return;
      const again = await kit.send(subject, { key });
      v.check(sameAnswer(first, again), `retry: ${told(again, 'idempotent-replayed')}, the same answer as the first`);
      if (again.kind === 'answered' && !again.headers['idempotent-replayed']) v.note('no Idempotent-Replayed header');
      await v.effects(subject, 1);
    },
  },
  {
    name: 'retry-while-running',
    group: 'draft',
    needs: ['slow'],
    title: 'a retry while the first is still running is refused with 409 (Retry-After recommended)',
    async run(kit, v) {
      const { subject, first, second: retry } = await overlapping(kit, v, {});
      v.check(statusOf(retry) === 409, `retry while the first runs: ${told(retry, 'retry-after')} (expected 409)`);
      if (retry.kind === 'answered' && retry.status === 409 && !retry.headers['retry-after'])
        v.note('409 without Retry-After');
      v.check(isSuccess(first), `first: ${told(first)}`);
      await v.effects(subject, 1);
    },
  },
  {
    name: 'prefer-wait',
    group: 'draft',
    needs: ['slow'],
    title: 'a retry with Prefer: wait while the first runs gets 409, or waits and gets the first answer (RFC 7240)',
    async run(kit, v) {
      const {
        subject,
        first: done,
        second: waited,
      } = await overlapping(kit, v, {
        headers: { prefer: 'wait=10' },
        timeoutMs: 15_000,
      });
      v.check(isSuccess(done), `first: ${told(done)}`);
      const ignored = statusOf(waited) === 409;
      if (v.check(ignored || sameAnswer(done, waited), `Prefer: wait=10: ${told(waited, 'preference-applied')}`)) {
        v.note(ignored ? 'Prefer: wait is not applied (409)' : 'Prefer: wait is applied: the first answer');
      }
      await v.effects(subject, 1);
    },
  },
  {
    name: 'key-spellings',
    group: 'draft',
    title: 'the key quoted ("k") and bare (k) is one key, or the bare spelling is refused; never a second effect',
    async run(kit, v) {
      const subject = await kit.subject();
      const key = kit.key();
      const quoted = await kit.send(subject, { key });
      if (!v.success(quoted, `"${key}": ${told(quoted)}`)) return;
      const bare = await kit.send(subject, { key: null, rawKey: key });
      const refused = statusOf(bare) === 400;
      if (v.check(refused || sameAnswer(quoted, bare), `${key} (bare): ${told(bare)}, the first answer or 400`)) {
        v.note(refused ? 'the bare spelling is refused (400)' : 'the bare spelling names the same key');
      }
      await v.effects(subject, 1);
    },
  },
  {
    name: 'keys-scoped-per-caller',
    group: 'draft',
    needs: ['callers'],
    title: 'another caller’s request with the same key is its own: never the first caller’s answer, never a 422',
    async run(kit, v) {
      const [mine, theirs] = [await kit.subject(), await kit.subject()];
      const key = kit.key();
      const first = await kit.send(mine, { key });
      if (!v.success(first, `caller A: ${told(first)}`)) return;
      const other = await kit.send(theirs, { key });
      // Its own answer: not the first caller's body, whatever its status.
      const own = isSuccess(other) && other.text !== first.text;
      v.check(own, `caller B, same key: ${told(other)}, ${own ? 'its own answer' : 'caller A’s answer'}`);
      await v.effects(theirs, 1);
    },
  },
  {
    name: 'errors-are-problems',
    group: 'draft',
    title: 'every refusal (no key, a malformed key, a reused key) is application/problem+json (RFC 9457)',
    async run(kit, v) {
      const subject = await kit.subject();
      const key = kit.key();
      const first = await kit.send(subject, { key });
      const answers: Array<[string, KitResponse]> = [
        ['no key', await kit.send(subject, { key: null })],
        ['a malformed key', await kit.send(subject, { key: null, rawKey: MALFORMED_KEYS[0] })],
        ['a reused key', isSuccess(first) ? await kit.send(subject, { key, body: subject.otherBody }) : first],
      ];
      for (const [what, answer] of answers) {
        if ((statusOf(answer) ?? 0) < 400) {
          // Not refused at all: the cases of that refusal say so; this one is about how a refusal is written.
          v.note(`${what} was not refused (${told(answer)})`);
          continue;
        }
        const type = answer.kind === 'answered' ? (answer.headers['content-type'] ?? 'none') : 'no answer';
        const body = jsonOf(answer);
        const problem = type.startsWith('application/problem+json') && typeof body === 'object' && body !== null;
        v.check(problem, `${what}: ${told(answer)}, ${type}`);
      }
    },
  },
  {
    name: 'concurrent-same-key',
    group: 'concurrency',
    title: 'twenty requests at once with one key: one effect; every answer the first’s, or 409',
    async run(kit, v) {
      const subject = await kit.subject({ slow: true });
      const key = kit.key();
      const answers = await Promise.all(Array.from({ length: 20 }, () => kit.send(subject, { key })));
      const successes = answers.filter(isSuccess);
      v.check(successes.length > 0, `answers: ${summary(answers)}`);
      const others = answers.filter((answer) => !isSuccess(answer) && statusOf(answer) !== 409);
      v.check(others.length === 0, `${others.length} answer(s) neither a success nor 409`);
      const distinct = new Set(successes.map((answer) => answer.text)).size;
      v.check(distinct <= 1, `${distinct} different success bodies (expected one: the first’s)`);
      const { last } = await untilFinal(kit, subject, { key });
      v.check(successes[0] !== undefined && sameAnswer(successes[0], last), `a retry afterwards: ${told(last)}`);
      await v.effects(subject, 1);
    },
  },
  {
    name: 'concurrent-keys-one-intent',
    group: 'concurrency',
    needs: ['bodyNamesTheIntent', 'count'],
    title: 'twenty keys at once for one business intent (the same body): one effect',
    async run(kit, v) {
      const subject = await kit.subject({ slow: true });
      const answers = await Promise.all(Array.from({ length: 20 }, () => kit.send(subject, { key: kit.key() })));
      v.check(answers.some(isSuccess), `answers: ${summary(answers)}`);
      await v.effects(subject, 1, 'the body names one intent, whatever the keys');
    },
  },
  {
    name: 'burst-after-timeout',
    group: 'concurrency',
    needs: ['slow'],
    title: 'the caller times out, then ten retries at once: each 409 or the first answer; then the first answer',
    async run(kit, v) {
      const subject = await kit.subject({ slow: true });
      const key = kit.key();
      const first = await kit.send(subject, { key, timeoutMs: 300 });
      v.check(first.kind === 'no answer', `first, the caller gives up after 300 ms: ${told(first)}`);
      const burst = await Promise.all(Array.from({ length: 10 }, () => kit.send(subject, { key })));
      const wrong = burst.filter((answer) => statusOf(answer) !== 409 && !isSuccess(answer));
      v.check(wrong.length === 0, `the burst: ${summary(burst)}`);
      const { last } = await untilFinal(kit, subject, { key });
      v.check(isSuccess(last), `then: ${told(last)}`);
      // Every success is the outcome: the answer a retry gets once everything has settled, not a placeholder.
      await sleep(kit.slowMs);
      const settled = await kit.send(subject, { key });
      const successes = [...burst, last].filter(isSuccess);
      const placeholders = successes.filter((answer) => !sameAnswer(answer, settled)).length;
      v.check(placeholders === 0, `${placeholders} success(es) other than the settled answer (${told(settled)})`);
      await v.effects(subject, 1);
    },
  },
  {
    name: 'timeout-then-retry',
    group: 'recovery',
    needs: ['slow'],
    title: 'a client that gives up early and retries with the same key gets the outcome, with one effect',
    async run(kit, v) {
      const subject = await kit.subject({ slow: true });
      const key = kit.key();
      // It gives up after a quarter of the slow effect and tries again 100 ms later: its retries come while the
      // first still runs (a 409's Retry-After is honoured, up to 1 s). Each try waits twice as long as the one before
      // (up to twice the slow effect), as a client backing off does: a busy server's replay may take longer than the
      // first try's quarter, and how fast it answers is not what this case checks.
      const answers: KitResponse[] = [];
      for (let i = 0; i < 10 && !answers.some(isSuccess); i++) {
        const timeoutMs = Math.min(Math.round(kit.slowMs / 4) * 2 ** i, kit.slowMs * 2);
        const answer = await kit.send(subject, { key, timeoutMs });
        answers.push(answer);
        const after = answer.kind === 'answered' ? Number(answer.headers['retry-after']) : Number.NaN;
        if (!isSuccess(answer)) await sleep(Number.isFinite(after) ? Math.min(after * 1_000, 1_000) : 100);
      }
      const got = answers.find(isSuccess);
      if (!v.success(got, `tries: ${answers.map((answer) => told(answer)).join(' · ')}`)) return;
      // What it got is the outcome: the answer a retry gets once everything has settled, not a placeholder.
      await sleep(kit.slowMs);
      const settled = await kit.send(subject, { key });
      v.check(sameAnswer(got, settled), `got ${told(got)}; once settled, a retry: ${told(settled)}, the same`);
      await v.effects(subject, 1, 'the abandoned first attempt and its retries are one intent');
    },
  },
  {
    name: 'retry-after-lost-answer',
    group: 'recovery',
    needs: ['slow'],
    title: 'the first answer is lost on the way back; the retry after it gets that answer, with one effect',
    async run(kit, v) {
      const subject = await kit.subject({ slow: true });
      const key = kit.key();
      const lost = await kit.send(subject, { key, timeoutMs: Math.round(kit.slowMs / 2) });
      v.check(lost.kind === 'no answer', `first: ${told(lost)} (its answer lost)`);
      await sleep(kit.slowMs);
      const { last, answers } = await untilFinal(kit, subject, { key });
      v.check(isSuccess(last), `retry: ${answers.map((answer) => told(answer)).join(' · ')}`);
      await v.effects(subject, 1);
    },
  },
];
