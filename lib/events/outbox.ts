import 'server-only';
// The transactional outbox: "the payment succeeded" is written in the same statement as the order's move to
// PAID, so the event exists if and only if the payment was recorded; the relay publishes it later. One event
// per charge (the unique key on topic and charge id): an attempt, a replay of the bank's key, the reconciler and
// the settlement report may each record the same charge, and the customer still gets one receipt.
export const PAYMENT_PAID = 'payment.paid';
