'use client';
import { useLocale, useTranslations } from 'next-intl';
import { createContext, type ReactNode, useContext } from 'react';
import { formatCents, formatTime } from '@/lib/format';
import { usePolling } from '@/lib/ui/use-polling';
import { chargesInWords } from './pay-state';
import { useSay } from './use-say';

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

/** The order's status and the customer's card statement, as the bank recorded it, updating live. */
export function LiveOrder() {
  const t = useTranslations('checkout');
  const say = useSay();
  const locale = useLocale();
  const order = useLiveOrder();
  const count = order.charges.length;
  return (
    <>
      <section className="card" aria-labelledby="status-title">
        <h2 id="status-title">{t('status.title')}</h2>
        <p>
          <span className={`status-badge status-${order.status}`} data-testid="order-status" data-status={order.status}>
            {isStatus(order.status) ? t(`status.${order.status}`) : order.status}
          </span>
          {count > 1
            ? t.rich('status.chargedTimes', { count, alarm: (words) => <span className="alarm">{words}</span> })
            : null}
        </p>
      </section>
      <section className={`card statement ${count > 1 ? 'charged-twice' : ''}`} aria-labelledby="statement-title">
        <h2 id="statement-title">{t('statement.title')}</h2>
        <p data-testid="charge-count" className={count > 1 ? 'alarm' : 'muted'}>
          {say(chargesInWords(count))}
        </p>
        {count > 0 ? (
          <table>
            <caption className="visually-hidden">{t('statement.caption', { orderNo: order.orderNo })}</caption>
            <thead>
              <tr>
                <th scope="col">{t('statement.charge')}</th>
                <th scope="col">{t('statement.amount')}</th>
                <th scope="col">{t('statement.time')}</th>
              </tr>
            </thead>
            <tbody>
              {order.charges.map((charge) => (
                <tr key={charge.id}>
                  <td className="mono">{charge.id}</td>
                  <td>{formatCents(charge.amountCents, locale)}</td>
                  <td>{formatTime(new Date(charge.createdAt), locale)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </section>
    </>
  );
}

/** The payment states (prisma/schema.prisma's PaymentStatus): the badge says them in words, `data-status` as code. */
const STATUSES = ['PENDING', 'PROCESSING', 'PAID', 'DECLINED', 'UNKNOWN'] as const;
const isStatus = (status: string): status is (typeof STATUSES)[number] =>
  (STATUSES as readonly string[]).includes(status);
