import { labDisabled } from '@/lib/http/lab-guard';
import { otherMethods } from '@/lib/http/methods';
import { json, withProblems } from '@/lib/http/problem';
import { resetLabSettings } from '@/lib/lab/settings-store';

/** All layers on, no faults. */
export const POST = withProblems(async (): Promise<Response> => {
  return labDisabled() ?? json(await resetLabSettings());
});

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
