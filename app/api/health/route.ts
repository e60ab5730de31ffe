import { checkHealth } from '@/lib/health';
import { hostAllowed } from '@/lib/http/hosts';
import { otherMethods } from '@/lib/http/methods';
import { hostRefused, inLanguageOf, json, problem, say } from '@/lib/http/problem';

export const dynamic = 'force-dynamic';

export async function GET(request: Request): Promise<Response> {
  return inLanguageOf(request, () => answerHealth(request));
}

async function answerHealth(request: Request): Promise<Response> {
  if (!hostAllowed(request.headers.get('host'))) return hostRefused(request);
  const health = await checkHealth();
  const down = Object.entries(health)
    .filter(([, state]) => state === 'down')
    .map(([name]) => name);
  if (down.length > 0) {
    return problem(503, 'service-unavailable', 'Service unavailable', {
      detail: say(down.length > 1 ? 'details.servicesDown' : 'details.serviceDown', { services: down.join(' and ') }),
      ...health,
    });
  }
  // Redis full refuses every write (noeviction): new orders and payments get 503, so health says so too.
  if (health.redis === 'full') {
    return problem(503, 'service-unavailable', 'Service unavailable', { detail: say('details.redisFull'), ...health });
  }
  return json({ status: health.redis === 'near-full' ? 'degraded' : 'ok', ...health });
}

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
