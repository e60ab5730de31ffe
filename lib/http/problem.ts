// RFC 9457 problem details: every error of every route has this shape, and never a stack trace.
// What a program reads (`type`, `title`, `status`, the extensions, `errors[].field`) is the same in every
// language; what a person reads (`detail`, `errors[].message`) is said in the caller's language, negotiated
// from Accept-Language (the cookie of the pages does not count here), with Content-Language and
// Vary: Accept-Language. The words are messages/<locale>/problems.json; English is what it always was.

import { AsyncLocalStorage } from 'node:async_hooks';
// use-intl's core (next-intl's own, without React): the API's problems are written outside React, and by
// processes that have none (the cluster's launcher reads lib/http/presenter.ts).
import { createTranslator } from 'use-intl/core';
import type { z } from 'zod';
import { DEFAULT_LOCALE, type Locale, negotiateLocale } from '../i18n/locales.ts';
import { MESSAGES } from '../i18n/messages.ts';
import { faultyService } from './faults.ts';
import { hostAllowed } from './hosts.ts';
import { type ProblemType, problemTypeUri } from './problem-types.ts';

type ProblemMessages = (typeof MESSAGES)['en']['problems'];
/** A message of messages/<locale>/problems.json: `details.orderNotFound`, `fields.isRequired`… */
export type ProblemMessageKey = {
  [Group in keyof ProblemMessages]: `${Group & string}.${keyof ProblemMessages[Group] & string}`;
}[keyof ProblemMessages];

/**
 * Words for a person, said in the caller's language when the problem is answered: a message and its values.
 * A value is data (an order number, a path: as is) or a message itself. Numbers are given as strings, so
 * that 65536 stays 65536 (a number would be formatted: 65,536).
 */
export type Say = { key: ProblemMessageKey; values?: Record<string, string | Say> };
export const say = (key: ProblemMessageKey, values?: Say['values']): Say => ({ key, values });
const isSay = (value: unknown): value is Say => typeof value === 'object' && value !== null && 'key' in value;

export type FieldError = { field: string; message: string };

export type Problem = {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: FieldError[];
  [extension: string]: unknown;
};

/** A problem's `detail` and `errors`, in words or as messages to say; any other member is an extension. */
export type ProblemExtra = {
  detail?: string | Say;
  errors?: Array<{ field: string; message: string | Say }>;
  [extension: string]: unknown;
};

// The language of the request being answered: set around each route handler (withProblems, inLanguageOf),
// read where its problem is written, however deep (a payment's outcome, a rate limit, a body's parser).
const requestLanguage = new AsyncLocalStorage<Locale>();

/** Runs `answer` with the problems it returns said in the request's language (its Accept-Language). */
export function inLanguageOf<T>(request: Request, answer: () => T): T {
  return requestLanguage.run(negotiateLocale(request.headers.get('accept-language')), answer);
}

const translators = new Map<Locale, ReturnType<typeof createTranslator<ProblemMessages>>>();

/** The words of a message, in a language. */
export function sayIn(locale: Locale, text: Say): string {
  let t = translators.get(locale);
  if (!t) {
    t = createTranslator({ locale, messages: MESSAGES[locale].problems as ProblemMessages });
    translators.set(locale, t);
  }
  const values = Object.fromEntries(
    Object.entries(text.values ?? {}).map(([name, value]) => [name, isSay(value) ? sayIn(locale, value) : value]),
  );
  return t(text.key as never, values as never);
}

/**
 * A problem response. Its `type` is the page that documents it (lib/http/problem-types.ts), also linked
 * as `Link: <…>; rel="describedby"`, as the Idempotency-Key draft suggests for its errors.
 */
export function problem(
  status: number,
  type: ProblemType,
  title: string,
  extra: ProblemExtra = {},
  headers: HeadersInit = {},
): Response {
  const uri = problemTypeUri(type);
  const locale = requestLanguage.getStore() ?? DEFAULT_LOCALE;
  let spoken = false;
  const speak = (text: string | Say): string => {
    if (!isSay(text)) return text;
    spoken = true;
    return sayIn(locale, text);
  };
  const members = Object.entries(extra).map(([name, value]): [string, unknown] =>
    name === 'detail' && value !== undefined
      ? [name, speak(value as string | Say)]
      : name === 'errors' && Array.isArray(value)
        ? [name, (value as NonNullable<ProblemExtra['errors']>).map((e) => ({ ...e, message: speak(e.message) }))]
        : [name, value],
  );
  const body: Problem = { type: uri, title, status, ...Object.fromEntries(members) };
  const responseHeaders = new Headers(headers);
  responseHeaders.set('content-type', 'application/problem+json');
  responseHeaders.set('cache-control', 'no-store');
  responseHeaders.set('link', `<${uri}>; rel="describedby"; type="text/html"`);
  if (spoken) {
    // The same problem reads differently for another Accept-Language: a cache must tell them apart.
    responseHeaders.set('content-language', locale);
    responseHeaders.append('vary', 'Accept-Language');
  }
  return new Response(JSON.stringify(body), { status, headers: responseHeaders });
}

/** Field errors from zod, with dotted paths ("lab.layers.token"); an unknown key is named itself. */
// zod's own messages stay English (they name the rule a program broke); the one written here is said.
export function fieldErrors(error: z.ZodError): Array<{ field: string; message: string | Say }> {
  const name = (path: PropertyKey[]) => (path.length > 0 ? path.map(String).join('.') : '(body)');
  return error.issues.flatMap(
    (issue): Array<{ field: string; message: string | Say }> =>
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => ({ field: name([...issue.path, key]), message: say('fields.notKnown') }))
        : [{ field: name(issue.path), message: issue.message }],
  );
}

export function validationProblem(error: z.ZodError): Response {
  const errors = fieldErrors(error);
  const fields = [...new Set(errors.map((e) => e.field))].join(', ');
  return problem(400, 'validation', 'Invalid request', { detail: say('details.invalidFields', { fields }), errors });
}

export function json(body: unknown, status = 200, headers: HeadersInit = {}): Response {
  const responseHeaders = new Headers(headers);
  responseHeaders.set('cache-control', 'no-store');
  return Response.json(body, { status, headers: responseHeaders });
}

/**
 * Wraps a route handler so that an unexpected fault becomes a problem response: 503 naming the service
 * that is down, or a plain 500. The error is logged on the server; the body never carries a stack trace.
 */
export function withProblems<A extends unknown[]>(
  handler: (...args: A) => Promise<Response>,
): (...args: A) => Promise<Response> {
  const answer = async (...args: A): Promise<Response> => {
    // DNS rebinding: a page of another site, its name pointed at this machine, may call the API as if it
    // were its own; only the names this app serves are answered (pages: proxy.ts does the same).
    const [request] = args;
    if (request instanceof Request && !hostAllowed(request.headers.get('host'))) return hostRefused(request);
    try {
      return await handler(...args);
    } catch (error) {
      const service = faultyService(error);
      console.error(
        `[api] ${service ? `${service} unavailable: ` : ''}${error instanceof Error ? error.message : error}`,
      );
      if (service) {
        return problem(
          503,
          'service-unavailable',
          'Service unavailable',
          { detail: say('details.serviceUnavailable', { service }), service },
          { 'retry-after': '2' },
        );
      }
      return problem(500, 'internal', 'Internal error', { detail: say('details.internal') });
    }
  };
  // Every problem of the handler, however deep it is written, in the caller's language.
  return (...args) => {
    const [request] = args;
    return request instanceof Request ? inLanguageOf(request, () => answer(...args)) : answer(...args);
  };
}

/** 421 for a request naming a host this app does not serve. */
export function hostRefused(request: Request): Response {
  const host = request.headers.get('host');
  return problem(421, 'host-not-allowed', 'Host not served here', {
    detail: say('details.hostNotAllowed', { host: host ?? say('details.noHost') }),
  });
}
