// An example adapter for a plain endpoint: `POST /v1/transfers` with an Idempotency-Key, that the kit can only
// observe through its answers (no way to count the side effect, nor to slow it down). Copy it, change the path,
// the body and the headers, and run:
//
//   npm run conformance -- --target https://api.example.test --config conformance/examples/plain-endpoint.ts
//
// What the kit then checks: the draft's semantics that need no slow side effect (a missing or malformed key, the
// key reused with another body, an exact replay, the key's spellings, errors as problem+json), keys scoped per
// caller if you name callers, and twenty requests at once with one key (every answer the same, or 409). The cases
// of a request still running, and every count of side effects, are skipped: the report says why. Environment:
// API_TOKEN (sent as a Bearer token), if your API needs one.
import { randomUUID } from 'node:crypto';
import type { Adapter } from '../adapter.ts';

const adapter: Adapter = {
  name: 'POST /v1/transfers (observed through its answers)',
  keyHeader: 'Idempotency-Key',
  headers: process.env.API_TOKEN ? { authorization: `Bearer ${process.env.API_TOKEN}` } : {},
  // Keys are scoped per caller: here, a header your gateway reads. Remove it if your API has one caller.
  callerHeaders: (caller) => ({ 'x-client-id': caller }),
  async subject() {
    // Each intent has a reference of its own, which the caller creates and keeps (as it keeps the key).
    const reference = randomUUID();
    return {
      path: '/v1/transfers',
      body: { reference, amountCents: 500, currency: 'EUR' },
      otherBody: { reference, amountCents: 700, currency: 'EUR' },
    };
  },
};

export default adapter;
