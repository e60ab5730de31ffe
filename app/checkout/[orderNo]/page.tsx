import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { formatCents } from '@/lib/format';
import { OrderNoSchema } from '@/lib/payments/order-no';
import { findOrderView } from '@/lib/payments/orders';

export const metadata: Metadata = { title: 'Checkout' };

export default async function CheckoutPage({ params }: PageProps<'/checkout/[orderNo]'>) {
  const { orderNo } = await params;
  const order = OrderNoSchema.safeParse(orderNo).success ? await findOrderView(orderNo) : null;
  if (!order) notFound();

  return (
    <>
      <h1>Checkout</h1>
      <div className="grid">
        <section className="card" aria-labelledby="summary-title">
          <h2 id="summary-title">Order summary</h2>
          <dl className="facts">
            <dt>Order</dt>
            <dd className="mono">{order.orderNo}</dd>
            <dt>Amount</dt>
            <dd>{formatCents(order.amountCents)}</dd>
            <dt>Status</dt>
            <dd>
              <span className={`status-badge status-${order.status}`}>{order.status}</span>
            </dd>
          </dl>
        </section>
        <section className="card" aria-labelledby="statement-title">
          <h2 id="statement-title">Card statement</h2>
          {order.charges.length === 0 ? (
            <p className="muted">No charge yet.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Charge</th>
                  <th scope="col">Amount</th>
                </tr>
              </thead>
              <tbody>
                {order.charges.map((charge) => (
                  <tr key={charge.id}>
                    <td className="mono">{charge.id}</td>
                    <td>{formatCents(charge.amountCents)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      </div>
    </>
  );
}
