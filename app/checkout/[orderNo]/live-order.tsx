'use client';
import { formatCents } from '@/lib/format';
import { usePolling } from '@/lib/ui/use-polling';

type OrderJson = {
  orderNo: string;
  amountCents: number;
  status: string;
  charges: Array<{ id: string; amountCents: number; createdAt: string }>;
};

/** The order's status and the customer's card statement, as the bank recorded it, updating live. */
export function LiveOrder({ initial }: { initial: OrderJson }) {
  const order = usePolling<OrderJson>(`/api/orders/${initial.orderNo}`, 1000, initial) ?? initial;
  const count = order.charges.length;
  return (
    <>
      <section className="card" aria-labelledby="status-title">
        <h2 id="status-title">Order status</h2>
        <p>
          <span className={`status-badge status-${order.status}`} data-testid="order-status">
            {order.status}
          </span>
        </p>
      </section>
      <section className={`card statement ${count > 1 ? 'charged-twice' : ''}`} aria-labelledby="statement-title">
        <h2 id="statement-title">Card statement</h2>
        <p data-testid="charge-count" className={count > 1 ? 'alarm' : 'muted'}>
          {count === 0 ? 'No charge yet.' : count === 1 ? 'Charged once.' : `Charged ${count} times for one order!`}
        </p>
        {count > 0 ? (
          <table>
            <caption className="visually-hidden">Charges the card network recorded for {order.orderNo}</caption>
            <thead>
              <tr>
                <th scope="col">Charge</th>
                <th scope="col">Amount</th>
                <th scope="col">Time</th>
              </tr>
            </thead>
            <tbody>
              {order.charges.map((charge) => (
                <tr key={charge.id}>
                  <td className="mono">{charge.id}</td>
                  <td>{formatCents(charge.amountCents)}</td>
                  <td>{new Date(charge.createdAt).toLocaleTimeString('en-GB')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </section>
    </>
  );
}
