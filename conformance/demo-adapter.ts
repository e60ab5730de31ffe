// The built-in adapter: this demo's own payments API (README "The HTTP API"). A subject is a new order of its
// own caller (X-Client-Id), paid with POST /api/payments; its side effects are the charges the simulated card
// network recorded for it (GET /api/orders/{orderNo}); the lab's per-order settings slow the bank down (a
// request still running) and, with `defences: 'off'`, switch every defence off for the run's orders only, so the
// kit can be watched failing where the defences are what made it pass.
import type { Adapter, Send } from './adapter.ts';

export type DemoOptions = { defences?: 'on' | 'off' };

const EVERY_DEFENCE_OFF = {
  pendingUi: false,
  token: false,
  requestKey: false,
  stateMachine: false,
  uniqueConstraint: false,
  bankKey: false,
};

const AMOUNT_CENTS = 4200;

export function demoAdapter(options: DemoOptions = {}): Adapter {
  const off = options.defences === 'off';
  const caller = (id: string) => ({ 'x-client-id': id });
  return {
    name: off ? 'this demo’s payments API, every defence off for its orders' : 'this demo’s payments API',
    keyHeader: 'Idempotency-Key',
    callerHeaders: caller,
    canSlow: true,
    // An order is paid once, whatever the key: layers 3-5 stop a second key for the same order.
    bodyNamesTheIntent: true,
    async subject({ caller: id, slowMs, send }) {
      const lab = {
        ...(off ? { layers: EVERY_DEFENCE_OFF } : {}),
        ...(slowMs ? { faults: { bankLatencyMs: slowMs } } : {}),
      };
      // Two orders: the one paid, and another for the same key with another body (a different intent).
      const [orderNo, otherOrderNo] = await Promise.all([newOrder(send, id, lab), newOrder(send, id, lab)]);
      return {
        path: '/api/payments',
        body: { orderNo, amountCents: AMOUNT_CENTS },
        otherBody: { orderNo: otherOrderNo, amountCents: AMOUNT_CENTS },
        sideEffects: () => chargesOf(send, id, orderNo),
      };
    },
  };
}

async function newOrder(send: Send, id: string, lab: Record<string, unknown>): Promise<string> {
  const body = Object.keys(lab).length > 0 ? { amountCents: AMOUNT_CENTS, lab } : { amountCents: AMOUNT_CENTS };
  const answer = await send({ path: '/api/orders', headers: { 'x-client-id': id }, body });
  if (answer.kind !== 'answered' || answer.status !== 201) {
    const said = answer.kind === 'answered' ? `${answer.status} ${answer.text.slice(0, 200)}` : answer.why;
    throw new Error(`POST /api/orders did not make an order: ${said}`);
  }
  return (JSON.parse(answer.text) as { orderNo: string }).orderNo;
}

async function chargesOf(send: Send, id: string, orderNo: string): Promise<number> {
  const answer = await send({ method: 'GET', path: `/api/orders/${orderNo}`, headers: { 'x-client-id': id } });
  if (answer.kind !== 'answered' || answer.status !== 200) throw new Error(`GET /api/orders/${orderNo} failed`);
  return (JSON.parse(answer.text) as { charges: unknown[] }).charges.length;
}

/**
 * What the kit finds on this demo with every defence off for its orders, case by case (npm test holds it to
 * this, e2e/conformance.spec.ts): the route's own checks (a key is required and well-formed, keys are scoped per
 * caller, refusals are problems) hold without any defence; every case of a duplicate charges again.
 */
export const WITHOUT_DEFENCES: Record<string, 'pass' | 'fail'> = {
  'missing-key': 'pass',
  'malformed-key': 'pass',
  'key-reused-with-another-body': 'fail',
  'exact-replay': 'fail',
  'retry-while-running': 'fail',
  'prefer-wait': 'fail',
  'key-spellings': 'fail',
  'keys-scoped-per-caller': 'pass',
  'errors-are-problems': 'pass',
  'concurrent-same-key': 'fail',
  'concurrent-keys-one-intent': 'fail',
  'burst-after-timeout': 'fail',
  'timeout-then-retry': 'fail',
  'retry-after-lost-answer': 'fail',
};
