'use client';
import { useLocale, useTranslations } from 'next-intl';
import { createContext, type ReactNode, useContext, useMemo } from 'react';
import { formatCents, formatTime } from '@/lib/format';
import { usePollingNow } from '@/lib/ui/use-polling';
import { chargesInWords } from './pay-state';
import { useSay } from './use-say';

export type OrderJson = {
  orderNo: string;
  amountCents: number;
  status: string;
  charges: Array<{ id: string; amountCents: number; createdAt: string }>;
  /** The bank's refunds of its charges, and the merchant's ledger (GET /api/orders/{orderNo}). */
  refunds: Array<{ id: string; chargeId: string; amountCents: number; createdAt: string }>;
  refundedCents: number;
};

type LiveOrderValue = { order: OrderJson; refresh: () => void };

const LiveOrderContext = createContext<LiveOrderValue | undefined>(undefined);

/**
 * Polls the order once a second for everything on the checkout that reads it: the status panel, the card
 * statement, and the outcome (which must never say "paid" without saying how many times). `refresh`: read it
 * at once (the Pay button's answer has just come).
 */
export function LiveOrderProvider({ initial, children }: { initial: OrderJson; children: ReactNode }) {
  const { data, now } = usePollingNow<OrderJson>(`/api/orders/${initial.orderNo}`, 1000, initial);
  const order = data ?? initial;
  const value = useMemo(() => ({ order, refresh: now }), [order, now]);
  return <LiveOrderContext value={value}>{children}</LiveOrderContext>;
}

function useLiveOrderValue(): LiveOrderValue {
  const value = useContext(LiveOrderContext);
  if (!value) throw new Error('useLiveOrder needs a LiveOrderProvider');
  return value;
}

export function useLiveOrder(): OrderJson {
  return useLiveOrderValue().order;
}

/** Reads the order again at once: for the form, when its answer has come. */
export function useRefreshOrder(): () => void {
  return useLiveOrderValue().refresh;
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
