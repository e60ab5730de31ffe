import { labDisabled } from '@/lib/http/lab-guard';
import { otherMethods } from '@/lib/http/methods';
import { json, withProblems } from '@/lib/http/problem';
import { GATEWAY_RECORD_KEY, GatewayRecordSchema, type GatewayView } from '@/lib/lab/gateway';
import { getRedis } from '@/lib/redis';

/**
 * The cluster's gateway (`npm run demo:cluster`): the nginx configuration it runs with, as the launcher last
 * wrote and reloaded it from the lab's gateway settings. `{ running: false }` where there is no gateway.
 */
export const GET = withProblems(async (): Promise<Response> => {
  const disabled = labDisabled();
  if (disabled) return disabled;
  const stored = GatewayRecordSchema.safeParse(JSON.parse((await getRedis().get(GATEWAY_RECORD_KEY)) ?? 'null'));
  const view: GatewayView = stored.success ? { running: true, ...stored.data } : { running: false };
  return json(view);
});

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
