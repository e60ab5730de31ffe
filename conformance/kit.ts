// The conformance run: every case (cases.ts) against one target through its adapter, a few at a time, within a
// budget of requests and time, each case with callers and keys of its own so that no case sees another's. The
// result is plain data: report.ts prints it as a table, JSON or JUnit XML.
import { randomBytes } from 'node:crypto';
import type { Adapter } from './adapter.ts';
import { CASES, type Case, type CaseGroup, type CaseKit, type Need, type OwnSubject, Verdict } from './cases.ts';
import { BudgetSpent, senderFor } from './http.ts';

export type CaseResult = {
  name: string;
  group: CaseGroup;
  title: string;
  status: 'pass' | 'fail' | 'skip';
  evidence: string[];
  notes: string[];
  /** The side effects the case counted (undefined where the adapter cannot count them). */
  sideEffects?: number;
  ms: number;
};

export type RunResult = {
  target: string;
  adapter: string;
  startedAt: string;
  ms: number;
  requests: number;
  cases: CaseResult[];
};

export type RunOptions = {
  target: URL;
  adapter: Adapter;
  /** Only the cases with these names. */
  only?: string[];
  /** Not the cases with these names. */
  skip?: string[];
  /** At most this many requests in the whole run (default 1,000). */
  maxRequests?: number;
  /** The whole run ends by then (default 180 s); a case still running then fails, saying so. */
  timeLimitMs?: number;
  /** How long a slowed side effect takes (default 1,500 ms): a request "still running" is one within it. */
  slowMs?: number;
  /** How long a request may take before the caller gives up (default 15 s). */
  requestTimeoutMs?: number;
  /** How many cases run at once (default 4). */
  parallel?: number;
};

/** The cases a run selects, by name; an unknown name is an error (a typo would silently check nothing). */
export function selectCases(only: string[] = [], skip: string[] = []): Case[] {
  const names = new Set(CASES.map((c) => c.name));
  const unknown = [...only, ...skip].filter((name) => !names.has(name));
  if (unknown.length > 0) throw new Error(`no such case: ${unknown.join(', ')} (cases: ${[...names].join(', ')})`);
  return CASES.filter((c) => (only.length === 0 || only.includes(c.name)) && !skip.includes(c.name));
}

export async function runConformance(options: RunOptions): Promise<RunResult> {
  const { target, adapter } = options;
  const started = Date.now();
  const budget = { maxRequests: options.maxRequests ?? 1_000, deadline: started + (options.timeLimitMs ?? 180_000) };
  const send = senderFor(target, adapter.headers ?? {}, budget, options.requestTimeoutMs ?? 15_000);
  const run = randomBytes(4).toString('hex');
  const slowMs = options.slowMs ?? 1_500;
  const queue = selectCases(options.only, options.skip);
  const results = new Map<string, CaseResult>();
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      results.set(next.name, await runCase(next, { adapter, send, slowMs, run }));
    }
  };
  await Promise.all(Array.from({ length: options.parallel ?? 4 }, worker));
  return {
    target: target.href,
    adapter: adapter.name,
    startedAt: new Date(started).toISOString(),
    ms: Date.now() - started,
    requests: send.sent(),
    cases: selectCases(options.only, options.skip).flatMap((c) => results.get(c.name) ?? []),
  };
}

/** What the adapter cannot do, of what the case needs. */
function missing(needs: Need[], adapter: Adapter): Need[] {
  const can: Record<Need, boolean> = {
    slow: adapter.canSlow === true,
    // Whether it can count is known once it has made a subject; a case that needs counting asks it then.
    count: true,
    callers: adapter.callerHeaders !== undefined,
    bodyNamesTheIntent: adapter.bodyNamesTheIntent === true,
  };
  return needs.filter((need) => !can[need]);
}

const NEED_WORDS: Record<Need, string> = {
  slow: 'the adapter cannot slow the side effect down',
  count: 'the adapter cannot count the side effect',
  callers: 'the adapter names no callers',
  bodyNamesTheIntent: 'the adapter does not say that a body names the intent',
};

type Context = { adapter: Adapter; send: ReturnType<typeof senderFor>; slowMs: number; run: string };

async function runCase(c: Case, context: Context): Promise<CaseResult> {
  const started = Date.now();
  const base = { name: c.name, group: c.group, title: c.title };
  const lacking = missing(c.needs ?? [], context.adapter);
  if (lacking.length > 0) {
    return { ...base, status: 'skip', evidence: [], notes: lacking.map((need) => NEED_WORDS[need]), ms: 0 };
  }
  const verdict = new Verdict();
  let counted = true;
  const kit = caseKit(c, context, (subject) => {
    if (!subject.sideEffects) counted = false;
  });
  try {
    await c.run(kit, verdict);
  } catch (error) {
    const why =
      error instanceof BudgetSpent
        ? error.message
        : `the case failed: ${error instanceof Error ? error.message : error}`;
    verdict.check(false, why);
  }
  if (!counted && c.needs?.includes('count')) {
    return { ...base, status: 'skip', evidence: verdict.evidence, notes: [NEED_WORDS.count], ms: Date.now() - started };
  }
  return {
    ...base,
    status: verdict.failed ? 'fail' : 'pass',
    evidence: verdict.evidence,
    notes: verdict.notes,
    sideEffects: verdict.sideEffects,
    ms: Date.now() - started,
  };
}

function caseKit(c: Case, { adapter, send, slowMs, run }: Context, made: (subject: OwnSubject) => void): CaseKit {
  let callers = 0;
  let keys = 0;
  const keyHeader = adapter.keyHeader ?? 'Idempotency-Key';
  return {
    adapter,
    slowMs,
    async subject(options = {}) {
      const caller = options.caller ?? `conf-${run}-${c.name}-${++callers}`;
      const slow = options.slow && adapter.canSlow ? slowMs : undefined;
      const subject = { ...(await adapter.subject({ caller, slowMs: slow, send })), caller };
      made(subject);
      return subject;
    },
    key: () => `conf-${run}-${c.name}-${++keys}-${randomBytes(6).toString('hex')}`,
    send(subject, options) {
      const key = options.rawKey ?? (options.key === null ? undefined : `"${options.key}"`);
      return send({
        path: subject.path,
        body: options.body ?? subject.body,
        timeoutMs: options.timeoutMs,
        headers: {
          ...adapter.callerHeaders?.(subject.caller),
          ...(key === undefined ? {} : { [keyHeader]: key }),
          ...options.headers,
        },
      });
    },
  };
}
