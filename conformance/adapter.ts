// What the conformance kit needs to know of an API to check it: how to make something to act on (an order to
// pay), the request that acts on it, and, where the API lets it, how to slow the side effect down and how to count
// it. A team points the kit at its own endpoint by writing one of these (docs/conformance.md); the kit ships one
// for this demo's API (demo-adapter.ts) and an example for a plain endpoint seen only through its answers
// (examples/plain-endpoint.ts). Nothing here imports the demo: an adapter is all the kit knows of a target.

/** A request the kit sends: a path on the target, its JSON body, extra headers, how long to wait for it. */
export type KitRequest = {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** The caller's own timeout: no answer by then is a request whose answer was lost (default: the kit's). */
  timeoutMs?: number;
};

/** What came back: an answer, or none (the caller's timeout, a connection that failed). */
export type KitResponse =
  | { kind: 'answered'; status: number; headers: Record<string, string>; text: string; ms: number }
  | { kind: 'no answer'; why: string; ms: number };

/** Sends one request to the target, within the run's budget of requests and time. */
export type Send = (request: KitRequest) => Promise<KitResponse>;

/** One intent to act on, made by the adapter: the request that performs it, and what the kit may ask of it. */
export type Subject = {
  /** The path the intent is sent to (POST), relative to the target: `/api/payments`. */
  path: string;
  /** The request body that performs it. */
  body: Record<string, unknown>;
  /** Another body for the same key: another intent (the key reused with a different request: 422). */
  otherBody: Record<string, unknown>;
  /** How many times the side effect happened for this intent (a card's charges), if the API can say. */
  sideEffects?: () => Promise<number>;
};

export type SubjectOptions = {
  /** The caller the subject belongs to (its headers come from `callerHeaders`). */
  caller: string;
  /** Make the side effect take about this long, if the adapter can (`canSlow`): a request still running. */
  slowMs?: number;
  /** The run's own sender, for an adapter that must call the API to make its subject (create an order). */
  send: Send;
};

export type Adapter = {
  /** How the report names the API. */
  name: string;
  /** The header that carries the key (`Idempotency-Key`). */
  keyHeader?: string;
  /** Headers every request carries (an API key, a tenant). */
  headers?: Record<string, string>;
  /**
   * The headers that name a caller, if keys are scoped per caller (the draft: a key is unique per client): the
   * kit then checks that one caller's key never returns another caller's answer. Absent: that case is skipped.
   */
  callerHeaders?: (caller: string) => Record<string, string>;
  /** The side effect can be slowed down (`slowMs`): the cases of a request still running need it. */
  canSlow?: boolean;
  /**
   * Two requests with the same body and different keys are one business intent that must happen once (a
   * payment of one order): the API deduplicates beyond the key. Absent: the keys are the only identity.
   */
  bodyNamesTheIntent?: boolean;
  /** A new intent to act on, for `caller`. */
  subject(options: SubjectOptions): Promise<Subject>;
};

/** The adapter a `--config` module exports: the adapter itself, or a function of the command line's options. */
export type AdapterModule = Adapter | ((options: Record<string, string | boolean | undefined>) => Adapter);
