'use client';
import { createContext, type ReactNode, useContext } from 'react';
import { formatCents } from '@/lib/format';
import { usePolling } from '@/lib/ui/use-polling';

export type OrderJson = {
  orderNo: string;
  amountCents: number;
  status: string;
  charges: Array<{ id: string; amountCents: number; createdAt: string }>;
};

const LiveOrderContext = createContext<OrderJson | undefined>(undefined);

/**
 * Polls the order once a second for everything on the checkout that reads it: the status panel, the card
 * statement, and the outcome (which must never say "paid" without saying how many times).
 */
export function LiveOrderProvider({ initial, children }: { initial: OrderJson; children: ReactNode }) {
  const order = usePolling<OrderJson>(`/api/orders/${initial.orderNo}`, 1000, initial) ?? initial;
  return <LiveOrderContext value={order}>{children}</LiveOrderContext>;
}

export function useLiveOrder(): OrderJson {
  const order = useContext(LiveOrderContext);
  if (!order) throw new Error('useLiveOrder needs a LiveOrderProvider');
  return order;
}

/** "No charge yet." / "Charged once." / "Charged 2 times for one order!": the statement's words, everywhere. */
export function chargesInWords(count: number): string {
  return count === 0 ? 'No charge yet.' : count === 1 ? 'Charged once.' : `Charged ${count} times for one order!`;
}

/** The order's status and the customer's card statement, as the bank recorded it, updating live. */
export function LiveOrder() {
  const order = useLiveOrder();
  const count = order.charges.length;
  return (
    <>
      <section className="card" aria-labelledby="status-title">
        <h2 id="status-title">Order status</h2>
        <p>
          <span className={`status-badge status-${order.status}`} data-testid="order-status">
            {order.status}
          </span>
          {count > 1 ? <span className="alarm"> and charged {count} times</span> : null}
        </p>
      </section>
      <section className={`card statement ${count > 1 ? 'charged-twice' : ''}`} aria-labelledby="statement-title">
        <h2 id="statement-title">Card statement</h2>
        <p data-testid="charge-count" className={count > 1 ? 'alarm' : 'muted'}>
          {chargesInWords(count)}
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
