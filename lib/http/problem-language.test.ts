// A problem's words for a person (`detail`, `errors[].message`) are said in the caller's language, negotiated
// from Accept-Language; what a program reads (`type`, `title`, `status`, `errors[].field`, the extensions) is
// the same in every language; English says exactly what the API always said (clients and tests match it).
import { createTranslator } from 'next-intl';
import { describe, expect, it } from 'vitest';
import { GET as unknownApiPath } from '../../app/api/[...path]/route.ts';
import { MESSAGES } from '../i18n/messages.ts';
import { KEY_RULES, keyProblem, keyReusedProblem, MAX_KEY_LENGTH, parseIdempotencyKey } from './idempotency-key.ts';
import { otherMethods } from './methods.ts';
import { type Say, say, sayIn, withProblems } from './problem.ts';
import { PROBLEM_TYPES, type ProblemType } from './problem-types.ts';

const asked = (acceptLanguage?: string) =>
  new Request('http://localhost/api/no-such-thing', {
    headers: { host: 'localhost', ...(acceptLanguage ? { 'accept-language': acceptLanguage } : {}) },
  });

describe('a problem in the caller’s language', () => {
  it('is Chinese for a browser that asks for Chinese, with the same type, title and status', async () => {
    const chinese = await unknownApiPath(asked('zh-CN,zh;q=0.9,en;q=0.8'));
    const english = await unknownApiPath(asked('en-GB,en;q=0.9'));
    expect(chinese.status).toBe(404);
    expect(chinese.headers.get('content-language')).toBe('zh-CN');
    expect(chinese.headers.get('vary')).toContain('Accept-Language');
    const { detail: chineseDetail, ...chineseRest } = await chinese.json();
    const { detail: englishDetail, ...englishRest } = await english.json();
    expect(chineseDetail).toBe('这个 API 中没有 /api/no-such-thing；请参阅 /api/docs。');
    expect(englishDetail).toBe('There is no /api/no-such-thing in this API; see /api/docs.');
    expect(chineseRest).toEqual(englishRest);
    expect(chineseRest).toEqual({ type: '/problems/not-found', title: 'Not found', status: 404 });
    expect(english.headers.get('content-language')).toBe('en');
  });

  it('is English without an Accept-Language, or for a language the demo does not speak', async () => {
    for (const acceptLanguage of [undefined, 'fr-FR,fr;q=0.9', '*']) {
      const answer = await unknownApiPath(asked(acceptLanguage));
      expect((await answer.json()).detail).toBe('There is no /api/no-such-thing in this API; see /api/docs.');
      expect(answer.headers.get('content-language')).toBe('en');
    }
  });

  it('says the field errors’ messages too, naming the same fields, however deep the problem is written', async () => {
    const handler = withProblems(async (_request: Request) =>
      keyProblem(parseIdempotencyKey('"k";v=1') as Extract<ReturnType<typeof parseIdempotencyKey>, { ok: false }>),
    );
    const chinese = await (await handler(asked('zh'))).json();
    const english = await (await handler(asked('en'))).json();
    expect(chinese).toEqual({
      ...english,
      detail: 'Idempotency-Key 请求头不能带参数（";name=value"）。',
      errors: [{ field: 'Idempotency-Key', message: '不能带参数（";name=value"）' }],
    });
    expect(english).toMatchObject({
      type: '/problems/idempotency-key',
      title: 'Idempotency-Key malformed',
      rule: 'parameters',
      detail: 'The Idempotency-Key header must not carry parameters (";name=value").',
      errors: [{ field: 'Idempotency-Key', message: 'must not carry parameters (";name=value")' }],
    });
  });

  it('is said in the language of the request a 405 answers', async () => {
    const request = new Request('http://localhost/api/payments', {
      method: 'DELETE',
      headers: { 'accept-language': 'zh-Hans-CN' },
    });
    const answer = otherMethods('POST').DELETE(request);
    expect(answer.headers.get('content-language')).toBe('zh-CN');
    expect((await answer.json()).detail).toBe('这里不允许 DELETE；允许的方法：POST, OPTIONS。');
  });
});

describe('the English problems', () => {
  // Every detail and field message as the API wrote it before it spoke Chinese: the same words, byte for byte.
  const said: Array<[Say, string]> = [
    [say('details.orderNotFound', { orderNo: 'ord_1' }), 'No order ord_1.'],
    [say('details.bodyTooLarge', { bytes: '65536' }), 'The body must be at most 65536 bytes.'],
    [say('details.amountMismatch', { amount: '4200' }), 'The order is for 4200 cents.'],
    [say('fields.orderAmount', { amount: '4200' }), "must be the order's amount, 4200"],
    [say('details.serviceDown', { services: 'redis' }), 'redis is down'],
    [say('details.servicesDown', { services: 'redis and database' }), 'redis and database are down'],
    [
      say('details.rateLimited', { points: '120', kind: say('kinds.payments'), seconds: '12' }),
      'At most 120 payments per minute per caller. Retry after 12 s.',
    ],
    [
      say('details.presenterOnly', { action: say('presenterActions.changeGlobalLab') }),
      'Changing the global lab settings changes the demo for everyone in the room: it needs the lab secret (LAB_SECRET) as a Bearer token.',
    ],
    [
      say('details.idempotencyKeyReused', {
        why: say('fields.firstUsedOn', { endpoint: 'POST /api/orders' }),
        noun: say('nouns.payment'),
      }),
      'This Idempotency-Key was first used on POST /api/orders. Use a new key for a new payment.',
    ],
    [say('details.notJson', { type: 'text/plain' }), 'Send the body as application/json (got text/plain).'],
    [say('details.noContentType'), 'Send the body as application/json (no Content-Type was sent).'],
    [say('details.hostNotAllowed', { host: say('details.noHost') }), 'This server does not answer for no host.'],
    [say('details.serviceUnavailable', { service: 'redis' }), 'redis is unavailable; try again shortly'],
    [say('details.invalidFields', { fields: 'amountCents, lab' }), 'Invalid field(s): amountCents, lab'],
  ];
  for (const [text, english] of said) {
    it(`says ${text.key} as before`, () => expect(sayIn('en', text)).toBe(english));
  }

  it('names the Idempotency-Key rules as the API reference does', () => {
    for (const [rule, words] of Object.entries(KEY_RULES)) {
      expect(sayIn('en', say(`keyRules.${rule as keyof typeof KEY_RULES}`, { max: String(MAX_KEY_LENGTH) }))).toBe(
        words,
      );
    }
  });

  // Each rule reads as the end of "The Idempotency-Key header …" (issue 31: "The Idempotency-Key header a quoted
  // key must be …" spliced two sentences).
  it('says every malformed key as one sentence', async () => {
    for (const header of ['"unterminated', 'has space', 'a,b', '"k";p=1', '', 'a'.repeat(300)]) {
      const parsed = parseIdempotencyKey(header);
      if (parsed.ok) throw new Error(`${header} was taken`);
      const { detail } = await keyProblem(parsed).json();
      expect(detail).toMatch(/^The Idempotency-Key header (is|must) [^.]*(\.|\(RFC 9651\)[^.]*\.)/);
    }
  });

  it('keeps a 422’s words when the key was used with another body', async () => {
    const body = await keyReusedProblem(undefined, 'order').json();
    expect(body.detail).toBe('This Idempotency-Key was used with a different body. Use a new key for a new order.');
    expect(body.errors).toEqual([{ field: 'Idempotency-Key', message: 'was used with a different body' }]);
  });
});

describe('the problem type pages', () => {
  const english = createTranslator({ locale: 'en', messages: MESSAGES.en, namespace: 'problems' });
  const chinese = createTranslator({ locale: 'zh-CN', messages: MESSAGES['zh-CN'], namespace: 'problems' });
  const markup = { code: (chunks: string) => chunks, docs: (chunks: string) => chunks };

  it('say in English what lib/http/problem-types.ts says, word for word', () => {
    for (const [type, info] of Object.entries(PROBLEM_TYPES)) {
      const key = type as ProblemType;
      expect(english(`types.${key}.name`), type).toBe(info.name);
      expect(english.markup(`types.${key}.means`, markup), type).toBe(info.means);
      expect(english.markup(`types.${key}.todo`, markup), type).toBe(info.todo);
    }
  });

  it('render every message in both languages (ICU quotes: {orderNo}, <secret>, <…>)', () => {
    expect(english('types.amount-mismatch.todo')).toContain('/api/orders/{orderNo}');
    expect(chinese.markup('types.presenter-only.todo', markup)).toContain('Authorization: Bearer <secret>');
    expect(chinese.markup('pages.intro', markup)).toContain('Link: <…>; rel="describedby"');
    for (const type of Object.keys(PROBLEM_TYPES) as ProblemType[]) {
      for (const part of ['name', 'means', 'todo'] as const) {
        expect(chinese.markup(`types.${type}.${part}`, markup)).toMatch(/\p{Script=Han}/u);
      }
    }
  });
});
