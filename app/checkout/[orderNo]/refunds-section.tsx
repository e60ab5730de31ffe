'use client';
// The checkout's Refunds section, once the order is paid (it appears as soon as the live order says PAID): the
// refunds on the statement, what is left to refund, and "Refund…", which opens a new refund's form.
import { useTranslations } from 'next-intl';
import { useLiveOrder } from './live-order';
import { OpenRefundForm } from './refunds/open-refund-form';
import { RefundStatement } from './refunds/refund-statement';

export function RefundsSection() {
  const t = useTranslations('refunds');
  const order = useLiveOrder();
  if (order.status !== 'PAID') return null;
  return (
    <section className="card" aria-labelledby="refunds-title" data-testid="refunds-section">
      <h2 id="refunds-title">{t('section.title')}</h2>
      <RefundStatement />
      <p className="small muted">{t('section.explain')}</p>
      <OpenRefundForm orderNo={order.orderNo} label="section.open" />
    </section>
  );
}
