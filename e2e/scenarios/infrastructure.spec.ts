// Source 3: infrastructure. A burst of concurrent deliveries of one payment (a queue redelivering, a
// gateway retrying): 20 requests with the same Idempotency-Key at once.
import { categorizeResponse, keepTheBankSlow, scenario } from './cell';

const N = 20;

scenario('burst', async ({ request, orderNo, db }) => {
  const headers = { 'idempotency-key': `burst-${orderNo}`, 'x-client-id': 'queue-consumer' };
  // "Concurrent": all twenty arrive while the first runs. A busy machine spreads them out, so the bank stays
  // slow for many times one request's round trip now (the declared latency at least).
  const probing = performance.now();
  await request.get(`/api/orders/${orderNo}`, { headers: { 'x-client-id': 'queue-consumer' } });
  await keepTheBankSlow(db, orderNo, 1_000 + 2 * N * (performance.now() - probing));
  const responses = await Promise.all(
    Array.from({ length: N }, () => request.post('/api/payments', { headers, data: { orderNo, amountCents: 4200 } })),
  );
  const seen = responses.map((response) => categorizeResponse(response.status(), response.headers()));
  // What the duplicates were told: all "paid" means every one of them charged the card.
  const duplicates = seen.filter((sees) => sees !== 'paid');
  if (duplicates.length === 0) return 'paid';
  if (seen.filter((sees) => sees === 'paid').length !== 1) return 'error';
  return duplicates.every((sees) => sees === duplicates[0]) ? (duplicates[0] ?? 'error') : 'error';
});
