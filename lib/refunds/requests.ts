import 'server-only';
// The back office's refund requests: the caller's side of a refund's identity (the article's first detail, its
// second half). An order may be refunded several times, so a refund is not known by its order: the form that asks
// for one opens a draft first, in its own statement, and every submit, resubmit, reload and retry of that form
// sends the draft's id as the refund's request id. A new refund is a new draft.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { getDb } from '../db.ts';
import type { CallerScope } from '../session.ts';

/** A draft's id: `rq_` and 16 base64url characters (12 random bytes). */
export const RefundRequestIdSchema = z.string().regex(/^rq_[A-Za-z0-9_-]{16}$/);

export type RefundRequestDraft = { id: string; orderNo: string; openedBy: string; createdAt: Date };

/** Its own statement, committed before any refund is sent: the id outlives the page, the tab and the server. */
export async function openRefundRequest(orderNo: string, caller: CallerScope): Promise<string> {
  const id = `rq_${randomBytes(12).toString('base64url')}`;
  await getDb().refundRequest.create({ data: { id, orderNo, openedBy: caller }, select: { id: true } });
  return id;
}

/** The form reads its draft back on every load and submit: an id nobody opened is no refund of ours. */
export async function findRefundRequest(id: string): Promise<RefundRequestDraft | undefined> {
  if (!RefundRequestIdSchema.safeParse(id).success) return undefined;
  const draft = await getDb().refundRequest.findUnique({
    where: { id },
    select: { id: true, orderNo: true, openedBy: true, createdAt: true },
  });
  return draft ?? undefined;
}
