import type { NextRequest } from 'next/server';
import { labDisabled } from '@/lib/http/lab-guard';
import { otherMethods } from '@/lib/http/methods';
import { presenterOnly } from '@/lib/http/presenter';
import { isPresenter } from '@/lib/http/presenter-session';
import { withProblems } from '@/lib/http/problem';
import { refuseCrossSite } from '@/lib/http/same-origin';
import { resetRoom } from '@/lib/lab/room-steering';

/** The room starts again: its timeline cleared, the global lab (gateway included) all on, its counts from now. */
export const POST = withProblems(async (request: NextRequest): Promise<Response> => {
  const disabled = labDisabled() ?? refuseCrossSite(request);
  if (disabled) return disabled;
  if (!(await isPresenter(request))) return presenterOnly('steerRoom');
  await resetRoom();
  return new Response(null, { status: 204 });
});

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
