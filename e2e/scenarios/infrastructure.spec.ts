// Source 3: infrastructure. A burst of concurrent deliveries of one payment (a queue redelivering, a
// gateway retrying): 20 requests with the same Idempotency-Key at once.
import { categorizeResponse, scenario } from './cell';

const N = 20;

scenario('burst', async ({ request, orderNo }) => {
  const headers = { 'idempotency-key': `burst-${orderNo}`, 'x-client-id': 'queue-consumer' };
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
