'use server';
// The refund form's two server actions: "Refund…" / "New refund" opens a draft (the refund's request id, kept
// before anything is sent), and its submit runs the refund pipeline under that id. Public POST endpoints like any
// other: everything is validated again here.
import { cookies, headers } from 'next/headers';
import { notFound, redirect } from 'next/navigation';
import { z } from 'zod';
import { faultyService } from '@/lib/http/faults';
import { limitRate } from '@/lib/http/rate-limit';
import { sessionIdOf } from '@/lib/http/session-cookie';
import { AttemptCrashed } from '@/lib/lab/policy';
import { AmountCentsSchema, OrderNoSchema } from '@/lib/payments/order-no';
import { findOrderView } from '@/lib/payments/orders';
import { refund } from '@/lib/refunds/refund';
import { findRefundRequest, openRefundRequest, RefundRequestIdSchema } from '@/lib/refunds/requests';
import { type CallerScope, sessionScope } from '@/lib/session';
import { centsOf, type RefundState, refundStateOf } from './refund-state';

const RefundFormSchema = z.object({
  orderNo: OrderNoSchema,
  // The draft's id, made when the form opened: the refund's identity across every submit of this form.
  requestId: RefundRequestIdSchema,
  // Stamped by the form at each submit (epoch ms), as many real forms do: the lab's paramHash key hashes it.
  submittedAt: z.coerce.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
});

/** The amount as typed (dollars), in cents: a whole number of cents from 1 to one million dollars. */
const AmountSchema = z
  .string()
  .max(32)
  .transform((typed) => centsOf(typed) ?? Number.NaN)
  .pipe(AmountCentsSchema);

/** A form field, or undefined when the form did not send it. */
const field = (formData: FormData, name: string) => formData.get(name) ?? undefined;

/** The session's caller, if its cookie is one the server signed. */
async function callerOfSession(): Promise<CallerScope | undefined> {
  const session = sessionIdOf(await cookies(), await headers());
  return session ? sessionScope(session) : undefined;
}

/**
 * "Refund…" and "New refund": a new refund intent gets a new draft, committed before the form that sends it is
 * shown, then that form's page. Only for a paid order this session may use.
 */
export async function openRefund(formData: FormData): Promise<never> {
  const orderNo = OrderNoSchema.safeParse(formData instanceof FormData ? formData.get('orderNo') : undefined);
  if (!orderNo.success) notFound();
  const caller = await callerOfSession();
  // No session (an expired cookie): the checkout's page load gives one, and says whether this session may see it.
  if (!caller) redirect(`/checkout/${orderNo.data}`);
  const order = await findOrderView(orderNo.data, caller);
  if (!order) notFound(); // no such order, or not this customer's
  if (order.status !== 'PAID') redirect(`/checkout/${orderNo.data}`);
  // A draft is a row, as an order is: counted like "Start a checkout".
  const limited = await limitRate('orders', caller, await headers());
  if (limited) redirect(`/limited?seconds=${limited.headers.get('retry-after') ?? '60'}`);
  const requestId = await openRefundRequest(orderNo.data, caller);
  redirect(`/checkout/${orderNo.data}/refunds/${requestId}`);
}

/** The refund form's submit: its draft's id, the amount, and the refund pipeline's answer as a state. */
export async function refundOrder(_previous: RefundState, formData: FormData): Promise<RefundState> {
  // Anyone may post an action with arguments of any shape (`[]`, `{"a":1}`): only a form is ours.
  if (!(formData instanceof FormData)) return { status: 'invalid', reason: 'form' };
  const parsed = RefundFormSchema.safeParse({
    orderNo: formData.get('orderNo'),
    requestId: formData.get('requestId'),
    submittedAt: field(formData, 'submittedAt'),
  });
  // The page sends these fields itself: one it did not make is no form of ours (the page says "reload").
  if (!parsed.success) return { status: 'invalid', reason: 'form' };
  const amount = AmountSchema.safeParse(formData.get('amount'));
  if (!amount.success) return { status: 'invalid', reason: 'amount' };
  const { orderNo, requestId, submittedAt } = parsed.data;
  const amountCents = amount.data;
  const caller = await callerOfSession();
  if (!caller) return { status: 'invalid', reason: 'sessionExpired' };
  if (await limitRate('payments', caller, await headers())) return { status: 'limited' };

  try {
    // 1. The draft: opened for this order (the pipeline checks that this caller may use the order).
    const draft = await findRefundRequest(requestId);
    if (!draft || draft.orderNo !== orderNo) return { status: 'invalid', reason: 'noSuchRefund' };
    // 2. The refund, known by the draft's id; the form's fields as submitted for the lab's paramHash key.
    const result = await refund({
      orderNo,
      amountCents,
      caller,
      channel: 'browser',
      requestId,
      params: { orderNo, amountCents, ...(submittedAt ? { submittedAt } : {}) },
    });
    return refundStateOf(result);
  } catch (error) {
    // The lab's crash fault in a room: this attempt stopped where its process would have died.
    if (error instanceof AttemptCrashed) return { status: 'connection_lost' };
    const service = faultyService(error);
    if (service) return { status: 'unavailable', service };
    throw error; // unexpected: error.tsx
  }
}
