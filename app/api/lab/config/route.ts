import { readJsonBody } from '@/lib/http/body';
import { labDisabled } from '@/lib/http/lab-guard';
import { json, withProblems } from '@/lib/http/problem';
import { LabSettingsPatchSchema } from '@/lib/lab/settings';
import { getLabSettings, updateLabSettings } from '@/lib/lab/settings-store';

export const GET = withProblems(async (): Promise<Response> => {
  return labDisabled() ?? json(await getLabSettings());
});

/** Merges a partial object into the global lab settings and returns the whole. */
export const PUT = withProblems(async (request: Request): Promise<Response> => {
  const disabled = labDisabled();
  if (disabled) return disabled;
  const body = await readJsonBody(request, LabSettingsPatchSchema);
  if (!body.ok) return body.response;
  return json(await updateLabSettings(body.value));
});
