import { checkHealth } from '@/lib/health';
import { otherMethods } from '@/lib/http/methods';
import { json, problem } from '@/lib/http/problem';

export const dynamic = 'force-dynamic';

export async function GET(): Promise<Response> {
  const health = await checkHealth();
  const down = Object.entries(health)
    .filter(([, state]) => state === 'down')
    .map(([name]) => name);
  if (down.length === 0) return json({ status: 'ok', ...health });
  return problem(503, 'service-unavailable', 'Service unavailable', {
    detail: `${down.join(' and ')} ${down.length > 1 ? 'are' : 'is'} down`,
    ...health,
  });
}

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
