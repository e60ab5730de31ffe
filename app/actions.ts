'use server';
import { cookies, headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { limitRate, rateKeyOf } from '@/lib/http/rate-limit';
import { sessionIdOf } from '@/lib/http/session-cookie';
import { createOrder } from '@/lib/payments/orders';
import { sessionScope } from '@/lib/session';

/** "Start a checkout": a new order that belongs to this browser's session, then its checkout page. */
export async function startCheckout(): Promise<never> {
  const session = sessionIdOf(await cookies(), await headers());
  const owner = session ? sessionScope(session) : undefined;
  const limited = await limitRate('orders', rateKeyOf(owner, await headers()));
  if (limited) redirect(`/limited?seconds=${limited.headers.get('retry-after') ?? '60'}`);
  const order = await createOrder({}, owner);
  redirect(`/checkout/${order.orderNo}`);
}
