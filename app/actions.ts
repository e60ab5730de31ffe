'use server';
import { cookies, headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { isExposed } from '@/lib/http/presenter';
import { limitRate } from '@/lib/http/rate-limit';
import { sessionIdOf } from '@/lib/http/session-cookie';
import { createOrder } from '@/lib/payments/orders';
import { sessionScope } from '@/lib/session';

/**
 * "Start a checkout": a new order that belongs to this browser's session, then its checkout page. Exposed to a
 * room, an action without a session never gets here (proxy.ts): an order nobody owns is anyone's to pay.
 */
export async function startCheckout(): Promise<never> {
  const session = sessionIdOf(await cookies(), await headers());
  const owner = session ? sessionScope(session) : undefined;
  if (!owner && isExposed()) redirect('/'); // the page load gives a session
  const limited = await limitRate('orders', owner, await headers());
  if (limited) redirect(`/limited?seconds=${limited.headers.get('retry-after') ?? '60'}`);
  const order = await createOrder({}, owner);
  redirect(`/checkout/${order.orderNo}`);
}
