'use client';
// The order's refunds as the card network recorded them, and what is left to refund by the merchant's ledger,
// updating live with the order (live-order.tsx polls GET /api/orders/{orderNo}, which carries both).
import { useLocale, useTranslations } from 'next-intl';
import { formatCents, formatTime } from '@/lib/format';
import { type OrderJson, useLiveOrder } from '../live-order';
import { leftToRefund, refundsInWords } from './refund-state';

/** What GET /api/orders/{orderNo} adds to the order the checkout reads: the bank's refunds and the ledger. */
export type RefundsJson = {
  refunds: Array<{ id: string; chargeId: string; amountCents: number; createdAt: string }>;
  refundedCents: number;
};

/** The order's refunds and ledger (none before the first read that has them). */
export function refundsOf(order: OrderJson): RefundsJson {
  return { refunds: order.refunds ?? [], refundedCents: order.refundedCents ?? 0 };
}

export function RefundStatement() {
  const t = useTranslations('refunds');
  const locale = useLocale();
  const order = useLiveOrder();
  const { refunds, refundedCents } = refundsOf(order);
  const count = refundsInWords(refunds.length);
  return (
    <>
      <p data-testid="refund-count" className="muted">
        {t(count.key, count.values)}
      </p>
      {refunds.length > 0 ? (
        <table data-testid="refunds">
          <caption className="visually-hidden">{t('statement.caption', { orderNo: order.orderNo })}</caption>
          <thead>
            <tr>
              <th scope="col">{t('statement.refund')}</th>
              <th scope="col">{t('statement.amount')}</th>
              <th scope="col">{t('statement.time')}</th>
            </tr>
          </thead>
          <tbody>
            {refunds.map((refund) => (
              <tr key={refund.id}>
                <td>
                  <code>{refund.id}</code>
                </td>
                <td>{formatCents(refund.amountCents, locale)}</td>
                <td>{formatTime(new Date(refund.createdAt), locale)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <p data-testid="refund-left">
        {t('statement.left', {
          amount: formatCents(leftToRefund({ amountCents: order.amountCents, refundedCents }), locale),
        })}
      </p>
    </>
  );
}
