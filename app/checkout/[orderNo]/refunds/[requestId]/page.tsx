import type { Metadata } from 'next';
import { cookies, headers } from 'next/headers';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { getLocale, getTranslations } from 'next-intl/server';
import { env } from '@/lib/env';
import { formatCents } from '@/lib/format';
import { sessionIdOf } from '@/lib/http/session-cookie';
import { getOrderLabSettings } from '@/lib/lab/settings-store';
import { OrderNoSchema } from '@/lib/payments/order-no';
import { findOrderView } from '@/lib/payments/orders';
import { findRefundRequest } from '@/lib/refunds/requests';
import { sessionScope } from '@/lib/session';
import { LiveOrderProvider } from '../../live-order';
import { OpenRefundForm } from '../open-refund-form';
import { RefundForm } from '../refund-form';
import { RefundStatement } from '../refund-statement';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations('refunds'))('title') };
}

/**
 * One refund's form: its draft (the request id every submit sends), the order's refunds so far, and the outcome.
 * Not found unless the draft exists, is this order's, and this session may use the order (its owner, or a session
 * its link let in).
 */
export default async function RefundPage({ params }: PageProps<'/checkout/[orderNo]/refunds/[requestId]'>) {
  const { orderNo, requestId } = await params;
  if (!OrderNoSchema.safeParse(orderNo).success) notFound();
  const session = sessionIdOf(await cookies(), await headers());
  const caller = session ? sessionScope(session) : undefined;
  const [draft, order, settings] = await Promise.all([
    findRefundRequest(requestId),
    findOrderView(orderNo, caller),
    getOrderLabSettings(orderNo),
  ]);
  if (!draft || draft.orderNo !== orderNo || !order || !settings) notFound();

  const t = await getTranslations('refunds');
  const amount = formatCents(order.amountCents, await getLocale());

  return (
    <>
      <h1>{t('title')}</h1>
      <LiveOrderProvider initial={JSON.parse(JSON.stringify(order))}>
        <div className="checkout-grid">
          <section className="card" aria-labelledby="request-title">
            <h2 id="request-title">{t('summary.title')}</h2>
            <dl className="facts">
              <dt>{t('summary.order')}</dt>
              <dd className="mono">{order.orderNo}</dd>
              <dt>{t('summary.amount')}</dt>
              <dd>{amount}</dd>
              <dt>{t('summary.requestId')}</dt>
              <dd>
                <code data-testid="refund-request-id">{draft.id}</code>
              </dd>
            </dl>
            <p className="small muted">{t('form.explain')}</p>
            <RefundForm orderNo={orderNo} requestId={draft.id} settings={settings} labEnabled={env().LAB_ENABLED} />
          </section>
          <div className="stack">
            <section className="card" aria-labelledby="refunds-title">
              <h2 id="refunds-title">{t('statement.title')}</h2>
              <RefundStatement />
            </section>
            <section className="card" aria-label={t('form.new')}>
              <p className="small muted">{t('form.newExplain')}</p>
              <OpenRefundForm orderNo={orderNo} label="form.new" secondary />
              <p className="small">
                <Link href={`/checkout/${orderNo}`}>{t('form.back')}</Link>
              </p>
            </section>
          </div>
        </div>
      </LiveOrderProvider>
    </>
  );
}
