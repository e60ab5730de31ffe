import { labDisabled } from '@/lib/http/lab-guard';
import { json, withProblems } from '@/lib/http/problem';
import { resetLabSettings } from '@/lib/lab/settings-store';

/** All layers on, no faults. */
export const POST = withProblems(async (): Promise<Response> => {
  return labDisabled() ?? json(await resetLabSettings());
});
