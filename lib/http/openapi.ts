// The API reference: an OpenAPI 3.1 document generated from the zod schemas the routes validate with
// (lib/http/api-schemas.ts), served at /api/openapi.json and rendered at /api/docs. Each request example
// carries the status it gets (`x-status`): the contract test (e2e/api-contract.spec.ts) sends every one to
// the running app and checks the status and the body against the documented schema.
import { z } from 'zod';
import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponsesObject,
} from 'zod-openapi';
import { BrowserEventSchema } from '../lab/browser-event.ts';
import { OrderNoSchema } from '../payments/order-no.ts';
import {
  CheckoutToken,
  CreateOrderSchema,
  EXAMPLE_ORDER_NO,
  GatewayViewSchema,
  Health,
  Lab,
  LabPatch,
  OrderNo,
  OrderSummary,
  OrderView,
  Payment,
  PaymentRequestSchema,
  Problem,
  Refund,
  RefundRequestSchema,
  TimelinePage,
  UNKNOWN_ORDER_NO,
} from './api-schemas.ts';
import { KEY_RULES, MAX_KEY_LENGTH } from './idempotency-key.ts';
import { MAX_WAIT_SECONDS } from './prefer.ts';
import { PROBLEM_TYPES, type ProblemType, problemTypeUri } from './problem-types.ts';

/**
 * A documented request: its value, and the status the API answers it with; `x-given: paid`: the example's order is
 * paid first (a refund needs one), which the contract test does before sending it.
 */
type Example = { summary: string; value: unknown; 'x-status': number; 'x-given'?: 'paid' };

const IdempotencyKey = z.string().meta({
  description: [
    'Names one intent (a payment, an order) and stays the same across its retries. An RFC 9651 Structured',
    `Field String ("8e03978e-40d5"), or the same key unquoted; both spellings are one key. 1-${MAX_KEY_LENGTH}`,
    `characters. Refused with 400 and \`rule\`: ${Object.entries(KEY_RULES)
      .map(([rule, text]) => `\`${rule}\` (${text})`)
      .join('; ')}.`,
    'Bound to the endpoint it was first used on: the same key elsewhere is a 422.',
  ].join(' '),
  example: '"8e03978e-40d5-43e8-bc93-6894a57f9324"',
});
const ClientId = z.string().meta({
  description:
    'The caller (a service). Keys, tokens and stored outcomes are scoped per caller. Required without a session cookie.',
  example: 'shop-backend',
});

const problemHeaders = {
  link: z.string().meta({ description: 'The page that documents the problem type: `<…>; rel="describedby"`.' }),
};
const traceHeaders = {
  'x-request-id': z.string().meta({ description: 'This request’s lane on the lab’s timeline.' }),
};
const answerHeaders = {
  ...traceHeaders,
  'x-answered-by': z.string().meta({
    description:
      'Who answered: a defence (token, requestKey, stateMachine, uniqueConstraint, bankKey), the bank, the reconciler, or `request` when the request itself was refused.',
  }),
};

/** A problem response: the types it may be, each linked to its page. */
function problems(description: string, types: ProblemType[], headers: Record<string, z.ZodType> = {}) {
  const first = types[0] ?? 'internal';
  return {
    description: `${description} Problem types: ${types.map((type) => `[${type}](${problemTypeUri(type)})`).join(', ')}.`,
    headers: z.object({ ...problemHeaders, ...headers }),
    content: {
      'application/problem+json': {
        schema: Problem,
        example: { type: problemTypeUri(first), status: PROBLEM_TYPES[first].status, ...PROBLEM_TYPES[first].example },
      },
    },
  };
}

const retryAfter = { 'retry-after': z.string().meta({ description: 'Seconds to wait before the retry: always 1.' }) };

/** RFC 7240: a duplicate of a request still running may wait for its outcome instead of a 409. */
const Prefer = z
  .string()
  .optional()
  .meta({
    description: `\`wait=N\` (RFC 7240): a retry that finds the first request with its key still running waits up to N seconds (at most ${MAX_WAIT_SECONDS}) for its outcome and answers it as a replay would, with \`Preference-Applied\`; past N, the 409 as without it. Other preferences are ignored.`,
    example: 'wait=10',
  });
const preferenceApplied = {
  'preference-applied': z
    .string()
    .optional()
    .meta({ description: 'Present when the request waited for the first outcome (`Prefer: wait=N`): `wait=N`.' }),
};

const paymentResponses: ZodOpenApiResponsesObject = {
  '201': {
    description:
      'Paid: this request charged the card, or it is a retry of the same key (then `Idempotent-Replayed: true`, the same bytes).',
    headers: z.object({
      ...answerHeaders,
      ...preferenceApplied,
      'idempotent-replayed': z.literal('true').optional().meta({ description: 'Present on a replay.' }),
    }),
    content: { 'application/json': { schema: Payment } },
  },
  '200': {
    description:
      'The order was already paid by another intent (another key, another tab): the existing payment. No new charge.',
    headers: z.object(answerHeaders),
    content: { 'application/json': { schema: Payment } },
  },
  '400': problems('The key, the caller, the token or the body is malformed.', [
    'idempotency-key',
    'validation',
    'malformed-json',
    'missing-caller',
    'invalid-client-id',
    'checkout-token',
  ]),
  '402': problems(
    'The card was declined: the final outcome, replayed to every retry.',
    ['card-declined'],
    answerHeaders,
  ),
  '404': problems('No such order.', ['order-not-found'], answerHeaders),
  '409': problems(
    'In progress (retry after Retry-After with the same key), or the Checkout-Token was already used; under the lab’s wrong answer to a duplicate (`answers.duplicate: error`), a duplicate of a finished payment.',
    ['payment-in-progress', 'already-submitted', 'duplicate-request'],
    { ...answerHeaders, ...retryAfter },
  ),
  '413': problems('The body is over 16 KiB.', ['body-too-large']),
  '422': problems('The key was used with another body or on another endpoint, or the amount is not the order’s.', [
    'idempotency-key-reused',
    'amount-mismatch',
  ]),
  '500': problems(
    'The bank answered, then a step after it failed (the lab’s downstream notification fault): the card may have been charged, and its outcome is kept on the key; retry with the same key to read it.',
    ['failed-after-bank'],
    { ...answerHeaders, ...retryAfter },
  ),
  '503': problems(
    'The bank failed before charging, or Redis or PostgreSQL is down. Nothing was charged; retry with the same key.',
    ['bank-unavailable', 'service-unavailable'],
    retryAfter,
  ),
};

const pay: ZodOpenApiOperationObject = {
  operationId: 'pay',
  tags: ['payments'],
  summary: 'Pay an order (service to service)',
  description: [
    'Charges the order once, whatever the retries: layers 2-5 of the demo stand between this call and the card.',
    'The first request is answered 201; a retry with the same key and body, the same status and bytes plus',
    '`Idempotent-Replayed: true`; a retry while the first runs, 409 with `Retry-After: 1`, or, with',
    '`Prefer: wait=N`, the first outcome once it is known (within N seconds).',
    'Stored and replayed for 24 hours: the payment’s outcome (201, 200, 402). Not stored, so a retry runs again:',
    '400, 404, 409, 413, 415, 422 for the amount, 429 and 503 (nothing moved); a 500 `failed-after-bank` is',
    'answered on its retry with the outcome the key kept. A key reused with another body is 422 while it is kept.',
    'docs/clients.md in the repository has tested configurations of undici, got, ky and axios for it.',
  ].join(' '),
  requestParams: {
    header: z.object({
      'idempotency-key': IdempotencyKey,
      prefer: Prefer,
      'x-client-id': ClientId.optional(),
      'checkout-token': z
        .string()
        .optional()
        .meta({ description: 'A one-time token from GET /api/tokens, for a client acting for a screen.' }),
    }),
  },
  requestBody: {
    required: true,
    content: {
      'application/json': {
        schema: PaymentRequestSchema,
        examples: {
          pay: { summary: 'Pay the order', value: { orderNo: EXAMPLE_ORDER_NO, amountCents: 4200 }, 'x-status': 201 },
          stamped: {
            summary: 'Pay, with the SDK’s timestamp (not part of the payment)',
            value: { orderNo: EXAMPLE_ORDER_NO, amountCents: 4200, requestedAt: 1_796_000_000_000 },
            'x-status': 201,
          },
          wrongAmount: {
            summary: 'An amount that is not the order’s',
            value: { orderNo: EXAMPLE_ORDER_NO, amountCents: 1 },
            'x-status': 422,
          },
          unknownOrder: {
            summary: 'An order that does not exist',
            value: { orderNo: UNKNOWN_ORDER_NO, amountCents: 4200 },
            'x-status': 404,
          },
          invalid: {
            summary: 'A field that is not a number',
            value: { orderNo: EXAMPLE_ORDER_NO, amountCents: '42' },
            'x-status': 400,
          },
        } satisfies Record<string, Example>,
      },
    },
  },
  responses: paymentResponses,
};

const refundOrder: ZodOpenApiOperationObject = {
  operationId: 'refund',
  tags: ['refunds'],
  summary: 'Refund part of a paid order (service to service)',
  description: [
    'Gives money back once per refund, whatever the retries, and never more in all than was charged. The',
    'Idempotency-Key is the refund’s request id: create it once for this refund and keep it (in your own',
    'transaction, before sending), send it on every retry; a second refund of the same order is a new id. Never',
    'make it of the order number (the second refund would be refused as the first) nor of the body (two refunds of',
    'one amount would merge, and a retry stamped anew would refund twice). The first request is answered 201; a',
    'retry with the same key and body, the same status and bytes plus `Idempotent-Replayed: true`; a retry while the',
    'first runs, 409 with `Retry-After: 1` (so is a refund of an order whose payment still runs, or waits for the bank to',
    'tell: the refund first settles what the bank can tell of it). Refused before the bank: an order that is not paid, and a refund past',
    'what is left (422 with `leftCents`: the merchant’s ledger, a constraint the database enforces). The bank’s',
    'refusal is the refund’s outcome (422, replayed).',
  ].join(' '),
  requestParams: {
    header: z.object({ 'idempotency-key': IdempotencyKey, 'x-client-id': ClientId.optional() }),
  },
  requestBody: {
    required: true,
    content: {
      'application/json': {
        schema: RefundRequestSchema,
        examples: {
          refund: {
            summary: 'Refund 5.00 of a paid order',
            value: { orderNo: EXAMPLE_ORDER_NO, amountCents: 500 },
            'x-status': 201,
            'x-given': 'paid',
          },
          tooMuch: {
            summary: 'More than was charged',
            value: { orderNo: EXAMPLE_ORDER_NO, amountCents: 5_000 },
            'x-status': 422,
            'x-given': 'paid',
          },
          unpaid: {
            summary: 'An order that is not paid',
            value: { orderNo: EXAMPLE_ORDER_NO, amountCents: 500 },
            'x-status': 422,
          },
          unknownOrder: {
            summary: 'An order that does not exist',
            value: { orderNo: UNKNOWN_ORDER_NO, amountCents: 500 },
            'x-status': 404,
          },
          invalid: {
            summary: 'An amount that is not a number',
            value: { orderNo: EXAMPLE_ORDER_NO, amountCents: '5' },
            'x-status': 400,
          },
        } satisfies Record<string, Example>,
      },
    },
  },
  responses: {
    '201': {
      description:
        'Refunded: this request made the refund, or it is a retry of the same key (then `Idempotent-Replayed: true`, the same bytes).',
      headers: z.object({
        ...answerHeaders,
        'idempotent-replayed': z.literal('true').optional().meta({ description: 'Present on a replay.' }),
      }),
      content: { 'application/json': { schema: Refund } },
    },
    '200': {
      description:
        'The refund was already made by another intent under the same identity (a wrong key strategy of the lab merged them): the existing refund.',
      headers: z.object(answerHeaders),
      content: { 'application/json': { schema: Refund } },
    },
    '400': problems('The key, the caller or the body is malformed.', [
      'idempotency-key',
      'validation',
      'malformed-json',
      'missing-caller',
      'invalid-client-id',
    ]),
    '404': problems('No such order (or not yours).', ['order-not-found'], answerHeaders),
    '409': problems(
      'In progress: retry after Retry-After with the same key (this refund, or the order’s payment, still running or being confirmed with the bank); under the lab’s wrong answer to a duplicate, a duplicate of a finished refund.',
      ['refund-in-progress', 'payment-in-progress', 'duplicate-request'],
      { ...answerHeaders, ...retryAfter },
    ),
    '413': problems('The body is over 16 KiB.', ['body-too-large']),
    '422': problems(
      'The order is not paid; the refund is more than what is left (`leftCents`); the bank refused it (its outcome, replayed); the key was used with another body or endpoint; this refund was asked for with another amount.',
      ['refund-exceeds-charge', 'order-not-paid', 'refund-refused', 'idempotency-key-reused', 'refund-amount-mismatch'],
      answerHeaders,
    ),
    '503': problems(
      'The bank failed before refunding, or Redis or PostgreSQL is down. Nothing was refunded; retry with the same key.',
      ['bank-unavailable', 'service-unavailable'],
      retryAfter,
    ),
  },
};

const createOrder: ZodOpenApiOperationObject = {
  operationId: 'createOrder',
  tags: ['orders'],
  summary: 'Create an order',
  description:
    'Creates a PENDING order. With an Idempotency-Key, at most once per key: a retry gets the same order (201, the same bytes, `Idempotent-Replayed: true`).',
  requestParams: {
    header: z.object({
      'idempotency-key': IdempotencyKey.optional(),
      prefer: Prefer,
      'x-client-id': ClientId.optional(),
    }),
  },
  requestBody: {
    content: {
      'application/json': {
        schema: CreateOrderSchema,
        examples: {
          default: { summary: 'An order of 42.00', value: {}, 'x-status': 201 },
          amount: { summary: 'An order of 25.00', value: { amountCents: 2500 }, 'x-status': 201 },
          withLab: {
            summary: 'With its own lab settings: layer 2 alone, a slow bank',
            value: {
              lab: {
                layers: { token: false, stateMachine: false, uniqueConstraint: false, bankKey: false },
                faults: { bankLatencyMs: 500 },
              },
            },
            'x-status': 201,
          },
          invalid: { summary: 'A negative amount', value: { amountCents: -5 }, 'x-status': 400 },
        } satisfies Record<string, Example>,
      },
    },
  },
  responses: {
    '201': {
      description: 'The order (a replay of a keyed request: the same bytes, `Idempotent-Replayed: true`).',
      headers: z.object({
        location: z.string().meta({ description: 'The order’s address.' }),
        'idempotent-replayed': z.literal('true').optional(),
        ...preferenceApplied,
      }),
      content: { 'application/json': { schema: OrderSummary } },
    },
    '400': problems('A malformed body or key; a key without a caller.', [
      'validation',
      'malformed-json',
      'idempotency-key',
      'missing-caller',
      'lab-disabled',
    ]),
    '409': problems('An order with this key is being created.', ['order-in-progress'], retryAfter),
    '413': problems('The body is over 16 KiB.', ['body-too-large']),
    '422': problems('The key was used with another body or on another endpoint.', ['idempotency-key-reused']),
  },
};

/** A parameter's examples, each with the status it gets. */
const orderNoExamples = {
  param: {
    examples: {
      existing: { summary: 'An existing order', value: EXAMPLE_ORDER_NO, 'x-status': 200 },
      unknown: { summary: 'No such order', value: UNKNOWN_ORDER_NO, 'x-status': 404 },
    } satisfies Record<string, Example>,
  },
};
const orderNoParam = OrderNoSchema.meta({ description: 'The order number.', ...orderNoExamples });

const getOrder: ZodOpenApiOperationObject = {
  operationId: 'getOrder',
  tags: ['orders'],
  summary: 'An order, and what the card network recorded for it',
  requestParams: { path: z.object({ orderNo: orderNoParam }) },
  responses: {
    '200': { description: 'The order and its charges.', content: { 'application/json': { schema: OrderView } } },
    '404': problems('No such order.', ['order-not-found']),
  },
};

const getToken: ZodOpenApiOperationObject = {
  operationId: 'getCheckoutToken',
  tags: ['payments'],
  summary: 'A one-time checkout token (layer 1), for a client acting for a screen',
  requestParams: {
    query: z.object({
      orderNo: orderNoParam,
    }),
    header: z.object({ 'x-client-id': ClientId.optional() }),
  },
  responses: {
    '200': {
      description: 'The token, valid once, for 5 minutes.',
      content: { 'application/json': { schema: CheckoutToken } },
    },
    '400': problems('A malformed order number or caller.', ['validation', 'missing-caller', 'invalid-client-id']),
    '404': problems('No such order.', ['order-not-found']),
  },
};

const health: ZodOpenApiOperationObject = {
  operationId: 'health',
  tags: ['service'],
  summary: 'Whether Redis and PostgreSQL answer',
  responses: {
    '200': {
      description: 'Both answer (degraded: Redis is nearly full).',
      content: { 'application/json': { schema: Health } },
    },
    '503': problems('One of them is down (named in the body), or Redis is full.', ['service-unavailable']),
  },
};

const labDisabled = problems('The lab is turned off (LAB_ENABLED=false).', ['not-found']);

const lab = {
  get: {
    operationId: 'getLabConfig',
    tags: ['lab'],
    summary: 'The lab settings (global; with ?orderNo=, the ones that order runs with)',
    requestParams: { query: z.object({ orderNo: OrderNo.optional() }) },
    responses: {
      '200': { description: 'The whole settings.', content: { 'application/json': { schema: Lab } } },
      '404': labDisabled,
    },
  },
  put: {
    operationId: 'updateLabConfig',
    tags: ['lab'],
    summary: 'Merge a partial change into the global lab settings',
    requestBody: { content: { 'application/json': { schema: LabPatch } } },
    responses: {
      '200': { description: 'The whole settings after the change.', content: { 'application/json': { schema: Lab } } },
      '400': problems('An invalid setting, named in `errors`.', ['validation', 'malformed-json']),
      '404': labDisabled,
    },
  },
} satisfies Record<string, ZodOpenApiOperationObject>;

/** The lab's other routes: reset, the cluster's gateway, the timeline. */
const labPaths = {
  '/api/lab/reset': {
    post: {
      operationId: 'resetLab',
      tags: ['lab'],
      summary: 'Every defence on, no fault',
      responses: {
        '200': { description: 'The settings after the reset.', content: { 'application/json': { schema: Lab } } },
        '404': labDisabled,
      },
    },
  },
  '/api/lab/gateway': {
    get: {
      operationId: 'readGateway',
      tags: ['lab'],
      summary: 'The cluster gateway’s nginx configuration',
      description:
        'In `npm run demo:cluster`, the gateway is nginx; its configuration is written from the global lab settings’ `gateway` and reloaded (`nginx -s reload`) when they change. This is that file, as nginx runs it.',
      responses: {
        '200': {
          description: 'The gateway, or `running: false`.',
          content: { 'application/json': { schema: GatewayViewSchema } },
        },
        '404': labDisabled,
      },
    },
  },
  '/api/lab/timeline': {
    get: {
      operationId: 'readTimeline',
      tags: ['lab'],
      summary: 'The timeline’s events after a cursor',
      requestParams: {
        query: z.object({ after: z.string().optional().meta({ description: 'A stream id, the last one read.' }) }),
      },
      responses: {
        '200': { description: 'The events.', content: { 'application/json': { schema: TimelinePage } } },
        '400': problems('`after` is not a stream id.', ['validation']),
        '404': labDisabled,
      },
    },
    post: {
      operationId: 'reportBrowserEvent',
      tags: ['lab'],
      summary: 'A click the checkout page swallowed (layer 0), drawn as a lane of its own',
      description:
        'Sent by the checkout page (its session cookie, not an X-Client-Id) when its pending UI swallows a click while a payment is in flight: no request left the page, so only the page can tell the lab. The lane, "0 Pending UI stopped", is shown in the lab of that session and of the order’s owner.',
      requestBody: {
        content: {
          'application/json': {
            schema: BrowserEventSchema.meta({
              id: 'BrowserEvent',
              example: { orderNo: EXAMPLE_ORDER_NO, event: 'click-swallowed' },
            }),
          },
        },
      },
      responses: {
        '204': { description: 'On the timeline.' },
        '400': problems('No session (a service cannot report a click), or an invalid field, named in `errors`.', [
          'missing-caller',
          'validation',
          'malformed-json',
        ]),
        '404': problems('No such order for this session, or the lab is turned off.', ['order-not-found', 'not-found']),
        '415': problems('The body is not JSON.', ['unsupported-media-type']),
        '429': problems('Too many reports from this session in the last minute.', ['rate-limited']),
      },
    },
    delete: {
      operationId: 'clearTimeline',
      tags: ['lab'],
      summary: 'Empty the timeline',
      responses: { '204': { description: 'Emptied.' }, '404': labDisabled },
    },
  },
  ...roomPaths(),
} satisfies ZodOpenApiPathsObject;

/** The presenter steering a workshop room, and an attendee following it (lib/lab/room-steering.ts). */
function roomPaths(): ZodOpenApiPathsObject {
  const RoomExercise = z
    .object({ exercise: z.object({ id: z.string(), at: z.number().int() }).nullable() })
    .meta({ id: 'RoomExercise', example: { exercise: { id: '1', at: 1_796_156_382_271 } } });
  const presenter = problems('Not the presenter (the lab secret, once the app is exposed).', ['presenter-only']);
  return {
    '/api/lab/room/exercise': {
      get: {
        operationId: 'readRoomExercise',
        tags: ['lab'],
        summary: 'The exercise the presenter set up for everyone',
        responses: {
          '200': { description: 'The exercise, or `null`.', content: { 'application/json': { schema: RoomExercise } } },
          '404': labDisabled,
        },
      },
      post: {
        operationId: 'setUpExerciseForEveryone',
        tags: ['lab'],
        summary: 'Set up an exercise for everyone',
        description:
          'The exercise’s preset becomes the global lab, which every attendee without a lab of their own follows at once; an attendee who changed their own lab is told (`X-Lab-Follows-Room: no` and `X-Lab-Room-Exercise` on `GET /api/lab/config`) and may follow (`POST /api/lab/follow`).',
        requestBody: {
          content: {
            'application/json': { schema: z.object({ exercise: z.string() }).meta({ example: { exercise: '1' } }) },
          },
        },
        responses: {
          '200': { description: 'Set up.', content: { 'application/json': { schema: RoomExercise } } },
          '400': problems('No such exercise, named in `errors`.', ['validation', 'malformed-json']),
          '401': presenter,
          '404': labDisabled,
        },
      },
    },
    '/api/lab/room/reset': {
      post: {
        operationId: 'resetRoom',
        tags: ['lab'],
        summary: 'Reset the room: its timeline, the global lab (the gateway included), its counts from now',
        responses: { '204': { description: 'Reset.' }, '401': presenter, '404': labDisabled },
      },
    },
    '/api/lab/follow': {
      post: {
        operationId: 'followRoom',
        tags: ['lab'],
        summary: 'Follow the room: drop this browser’s own lab changes',
        responses: {
          '200': { description: 'The lab, the room’s.', content: { 'application/json': { schema: Lab } } },
          '400': problems('No session: following the room is a browser’s.', ['missing-caller']),
          '404': labDisabled,
        },
      },
    },
  };
}

/** The OpenAPI 3.1 document of the whole API. */
export function openApiDocument() {
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Pay once',
      version: '1.0.0',
      description:
        'The HTTP API of a checkout that cannot charge a card twice. Errors are RFC 9457 problems whose `type` is a page of this server (/problems).',
    },
    tags: [
      { name: 'payments', description: 'Paying an order, at most once per intent.' },
      { name: 'refunds', description: 'Refunding part of a paid order, at most once per refund.' },
      { name: 'orders', description: 'Orders and their card statement.' },
      { name: 'lab', description: 'The teaching lab: switches and faults (off with LAB_ENABLED=false).' },
      { name: 'service', description: 'The service itself.' },
    ],
    paths: {
      '/api/payments': { post: pay },
      '/api/refunds': { post: refundOrder },
      '/api/orders': { post: createOrder },
      '/api/orders/{orderNo}': { get: getOrder },
      '/api/tokens': { get: getToken },
      '/api/health': { get: health },
      '/api/lab/config': lab,
      ...labPaths,
    },
  });
}
