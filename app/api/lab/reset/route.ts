import type { NextRequest } from 'next/server';
import { sessionCallerOf } from '@/lib/http/caller';
import { labDisabled } from '@/lib/http/lab-guard';
import { otherMethods } from '@/lib/http/methods';
import { presenterOnly } from '@/lib/http/presenter';
import { isPresenter } from '@/lib/http/presenter-session';
import { json, withProblems } from '@/lib/http/problem';
import { refuseCrossSite } from '@/lib/http/same-origin';
import { resetLabSettings, resetMyLabSettings } from '@/lib/lab/settings-store';

/** All layers on, no faults: my lab (a browser session's), or with `?scope=global` (the presenter) the global one. */
export const POST = withProblems(async (request: NextRequest): Promise<Response> => {
  const disabled = labDisabled() ?? refuseCrossSite(request);
  if (disabled) return disabled;
  const session = request.nextUrl.searchParams.get('scope') === 'global' ? undefined : sessionCallerOf(request);
  if (session) return json(await resetMyLabSettings(session), 200, { 'x-lab-scope': 'mine' });
  if (!(await isPresenter(request))) return presenterOnly('resetGlobalLab');
  return json(await resetLabSettings(), 200, { 'x-lab-scope': 'global' });
});

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
