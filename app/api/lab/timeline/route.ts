import type { NextRequest } from 'next/server';
import { z } from 'zod';
import { labDisabled } from '@/lib/http/lab-guard';
import { json, validationProblem, withProblems } from '@/lib/http/problem';
import { clearTimeline, readTimeline } from '@/lib/lab/timeline';

const QuerySchema = z.object({
  after: z
    .string()
    .regex(/^\d+-\d+$/, { message: 'must be a stream id' })
    .optional(),
});

/** The lab's timeline, polled by every open lab tab: `?after=<id>` returns only what is new. */
export const GET = withProblems(async (request: NextRequest): Promise<Response> => {
  const disabled = labDisabled();
  if (disabled) return disabled;
  const query = QuerySchema.safeParse({ after: request.nextUrl.searchParams.get('after') ?? undefined });
  if (!query.success) return validationProblem(query.error);
  return json({ events: await readTimeline(query.data.after) });
});

export const DELETE = withProblems(async (): Promise<Response> => {
  const disabled = labDisabled();
  if (disabled) return disabled;
  await clearTimeline();
  return new Response(null, { status: 204 });
});
