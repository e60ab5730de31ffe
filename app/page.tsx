import Link from 'next/link';
import { startCheckout } from './actions';

export default function HomePage() {
  return (
    <>
      <h1>A checkout that cannot charge a card twice</h1>
      <p>
        A customer clicks “Pay”, the page stalls, they click again. A phone loses its connection and the app retries. A
        gateway times out and sends the request to another server. Each of these sends the same payment twice, and a
        naive checkout charges the card twice. This demo stops every one of them with five defences, in the order a
        request meets them: a one-time token from the checkout page, a request key in Redis, a payment state machine in
        PostgreSQL, a unique constraint as the last millimetre, and the bank’s own idempotency key. And when a payment
        dies halfway (a crash, a pause, a bank that answers late), whatever cleans up after it cannot charge twice
        either.
      </p>
      <p>Switch any defence off in the lab and watch the duplicate charge appear on the card statement.</p>
      <div style={{ display: 'flex', flexWrap: 'wrap', gap: '1rem', margin: '1.5rem 0' }}>
        <form action={startCheckout}>
          <button type="submit" className="button">
            Start a checkout
          </button>
        </form>
        <Link href="/lab" className="button secondary">
          Open the lab
        </Link>
        <Link href="/scenarios" className="button secondary">
          Scenario results
        </Link>
      </div>
    </>
  );
}
