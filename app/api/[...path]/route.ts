import { inLanguageOf, problem, say } from '@/lib/http/problem';

// Any other address under /api: a problem, like every other answer of the API (Next.js would render its
// HTML not-found page, which a JSON client cannot read).
function notFound(request: Request): Response {
  return inLanguageOf(request, () =>
    problem(404, 'not-found', 'Not found', {
      detail: say('details.apiNotFound', { path: new URL(request.url).pathname }),
    }),
  );
}

export {
  notFound as DELETE,
  notFound as GET,
  notFound as OPTIONS,
  notFound as PATCH,
  notFound as POST,
  notFound as PUT,
};
