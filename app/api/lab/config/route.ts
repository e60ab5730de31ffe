import type { NextRequest } from 'next/server';
import { readJsonBody } from '@/lib/http/body';
import { labDisabled } from '@/lib/http/lab-guard';
import { otherMethods } from '@/lib/http/methods';
import { json, problem, withProblems } from '@/lib/http/problem';
import { LabSettingsPatchSchema } from '@/lib/lab/settings';
import { getLabSettings, getOrderLabSettings, updateLabSettings } from '@/lib/lab/settings-store';
import { OrderNoSchema } from '@/lib/payments/order-no';

/** The global settings; with `?orderNo=`, the settings that order runs with (its own win). */
export const GET = withProblems(async (request: NextRequest): Promise<Response> => {
  const disabled = labDisabled();
  if (disabled) return disabled;
  const orderNo = request.nextUrl.searchParams.get('orderNo');
  if (orderNo === null) return json(await getLabSettings());
  const settings = OrderNoSchema.safeParse(orderNo).success ? await getOrderLabSettings(orderNo) : undefined;
  return settings
    ? json(settings)
    : problem(404, 'order-not-found', 'Order not found', { detail: `No order ${orderNo}.` });
});

/** Merges a partial object into the global lab settings and returns the whole. */
export const PUT = withProblems(async (request: Request): Promise<Response> => {
  const disabled = labDisabled();
  if (disabled) return disabled;
  const body = await readJsonBody(request, LabSettingsPatchSchema);
  if (!body.ok) return body.response;
  return json(await updateLabSettings(body.value));
});

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { POST, PATCH, DELETE, OPTIONS } = otherMethods('GET', 'PUT');
