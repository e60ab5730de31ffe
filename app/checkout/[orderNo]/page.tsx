import type { Metadata } from 'next';
import { cookies, headers } from 'next/headers';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { getLocale, getTranslations } from 'next-intl/server';
import { issueCheckoutToken } from '@/lib/defences/checkout-token/defence';
import { env } from '@/lib/env';
import { formatCents } from '@/lib/format';
import { sessionIdOf } from '@/lib/http/session-cookie';
import { getOrderLabSettings } from '@/lib/lab/settings-store';
import { OrderNoSchema } from '@/lib/payments/order-no';
import { findOrderView, joinLinkFor, joinOrder } from '@/lib/payments/orders';
import { sessionScope } from '@/lib/session';
import { CheckoutForm } from './checkout-form';
import { LiveOrder, LiveOrderProvider } from './live-order';
import { RefundsSection } from './refunds-section';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations('checkout'))('title') };
}

export default async function CheckoutPage({ params, searchParams }: PageProps<'/checkout/[orderNo]'>) {
  const { orderNo } = await params;
  if (!OrderNoSchema.safeParse(orderNo).success) notFound();
  const session = sessionIdOf(await cookies(), await headers());
  const caller = session ? sessionScope(session) : undefined;
  // The order's link, opened on another device of the customer: that session may pay it too.
  const { join } = await searchParams;
  if (caller && typeof join === 'string' && /^[A-Za-z0-9_-]{22}$/.test(join)) await joinOrder(orderNo, join, caller);
  const [order, settings, joinLink] = await Promise.all([
    findOrderView(orderNo, caller),
    getOrderLabSettings(orderNo),
    joinLinkFor(orderNo, caller),
  ]);
  if (!order || !settings) notFound(); // no such order, or not this customer's

  // Layer 1: the page gets its one-time token when it opens (proxy.ts gave the browser its session).
  const token = caller ? (await issueCheckoutToken(orderNo, caller, env().CHECKOUT_TOKEN_TTL_SECONDS)).token : '';
  const t = await getTranslations('checkout');
  const amount = formatCents(order.amountCents, await getLocale());

  return (
    <>
      <h1>{t('title')}</h1>
      <LiveOrderProvider initial={JSON.parse(JSON.stringify(order))}>
        <div className="checkout-grid">
          <section className="card" aria-labelledby="summary-title">
            <h2 id="summary-title">{t('summary.title')}</h2>
            <dl className="facts">
              <dt>{t('summary.order')}</dt>
              <dd className="mono">{order.orderNo}</dd>
              <dt>{t('summary.amount')}</dt>
              <dd>{amount}</dd>
            </dl>
            <CheckoutForm
              orderNo={orderNo}
              amount={amount}
              token={token}
              settings={settings}
              labEnabled={env().LAB_ENABLED}
            />
            {joinLink ? (
              <p className="small">{t.rich('join', { link: (words) => <a href={joinLink}>{words}</a> })}</p>
            ) : null}
            {env().LAB_ENABLED ? (
              <p className="small">
                {t.rich('openLab', { link: (words) => <Link href={`/lab?order=${orderNo}`}>{words}</Link> })}
              </p>
            ) : null}
          </section>
          <div className="stack">
            <LiveOrder />
            <RefundsSection />
          </div>
        </div>
      </LiveOrderProvider>
    </>
  );
}
