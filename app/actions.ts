'use server';
import { redirect } from 'next/navigation';
import { createOrder } from '@/lib/payments/orders';

/** "Start a checkout": a new order, then its checkout page. */
export async function startCheckout(): Promise<never> {
  const order = await createOrder({});
  redirect(`/checkout/${order.orderNo}`);
}
