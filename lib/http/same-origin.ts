// A state-changing route answers only its own pages and non-browser callers: another site's page may make a
// browser send a "simple" cross-site POST (no preflight), with the visitor's cookies. Browsers say where a
// request comes from (Origin, Sec-Fetch-Site); a request that says another site is refused with 403. A caller
// that sends neither header (curl, a service, an SDK) is not a browser acting for another site.
import { problem, say } from './problem.ts';

export function refuseCrossSite(request: Request): Response | undefined {
  const site = request.headers.get('sec-fetch-site');
  const origin = request.headers.get('origin');
  const host = request.headers.get('host');
  let foreign = site === 'cross-site';
  if (!foreign && origin !== null) {
    try {
      foreign = origin === 'null' || new URL(origin).host !== host;
    } catch {
      foreign = true;
    }
  }
  if (!foreign) return undefined;
  return problem(403, 'cross-site-request', 'Cross-site request refused', {
    detail: say('details.crossSite'),
  });
}
