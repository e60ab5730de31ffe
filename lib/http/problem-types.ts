// Every problem `type` this API answers with, and the page each one resolves to (`/problems/{type}`): what
// it means, what the client should do, an example. `problem()` takes only these names, so a new type
// cannot ship without its page. Pure and browser-safe: the pages and the OpenAPI document read it too.

export type ProblemInfo = {
  /** The page's heading. */
  name: string;
  /** The HTTP status it comes with. */
  status: number;
  /** What happened, for a person reading the page. */
  means: string;
  /** What the client should do. */
  todo: string;
  /** Whether to send the same request again: never, or after Retry-After (with the same Idempotency-Key). */
  retry: 'no' | 'after Retry-After' | 'after fixing the request' | 'after reloading the page';
  /** An example body (its `type` and `status` are added by the page). */
  example: { title: string; detail?: string; [extension: string]: unknown };
};

export const PROBLEM_TYPES = {
  'idempotency-key': {
    name: 'Idempotency-Key missing or malformed',
    status: 400,
    means:
      'POST /api/payments (and a keyed POST /api/orders) needs an Idempotency-Key header: an RFC 9651 Structured Field String such as "8e03978e-40d5-43e8-bc93-6894a57f9324", or the same key unquoted (visible ASCII, no spaces, commas or semicolons), 1-255 characters. One key: a list of keys is refused. `rule` names the rule the header broke.',
    todo: 'Create one key per intent (a payment, an order), keep it with the intent, and send the same key on every retry of it.',
    retry: 'after fixing the request',
    example: {
      title: 'Idempotency-Key malformed',
      detail: 'The Idempotency-Key header must not carry parameters (";name=value").',
      errors: [{ field: 'Idempotency-Key', message: 'must not carry parameters (";name=value")' }],
      rule: 'parameters',
    },
  },
  'idempotency-key-reused': {
    name: 'Idempotency-Key reused with a different request',
    status: 422,
    means:
      'This key was first used with another request body, or on another endpoint. A key names one intent: the server will not guess which of the two you meant.',
    todo: 'Use a new key for a new intent. To retry, send exactly the first request again with its key.',
    retry: 'no',
    example: {
      title: 'Idempotency-Key reused with a different body',
      detail: 'This Idempotency-Key was used with a different request body. Use a new key for a new payment.',
      errors: [{ field: 'Idempotency-Key', message: 'was used with a different body' }],
    },
  },
  'cross-site-request': {
    name: 'Cross-site request refused',
    status: 403,
    means:
      'A browser sent this state-changing request for a page of another site (its Origin or Sec-Fetch-Site says so): a page elsewhere cannot make a visitor pay, change the lab or reset it.',
    todo: 'Call the API from this site’s pages, or from a server (which sends no Origin).',
    retry: 'no',
    example: {
      title: 'Cross-site request refused',
      detail: 'This route changes state and answers only pages of this site (Origin and Sec-Fetch-Site say otherwise).',
    },
  },
  'unsupported-media-type': {
    name: 'Body is not JSON',
    status: 415,
    means: 'The API reads JSON bodies only; this one was sent as another type (a form, text/plain).',
    todo: 'Send the body with Content-Type: application/json.',
    retry: 'after fixing the request',
    example: { title: 'Body is not JSON', detail: 'Send the body as application/json (got text/plain).' },
  },
  'rate-limited': {
    name: 'Too many requests',
    status: 429,
    means:
      'This caller, or its address, asked for more orders or payments in the last minute than one caller may (RATE_LIMIT_*_PER_MINUTE), or than one address may (RATE_LIMIT_CALLERS_PER_ADDRESS callers’ worth); or the presenter’s secret was tried too often. Nothing was done.',
    todo: 'Wait as long as Retry-After says, then retry with the same Idempotency-Key.',
    retry: 'after Retry-After',
    example: { title: 'Too many requests', detail: 'At most 120 payments per minute per caller. Retry after 12 s.' },
  },
  'payment-in-progress': {
    name: 'Request in progress',
    status: 409,
    means:
      'A request with this key (or for this order) is still running, or its outcome is being confirmed with the bank. Nothing new was started.',
    todo: 'Wait as long as Retry-After says (1 s), then send the same request with the same key: you get the first outcome once it is known. Or send Prefer: wait=N (up to 10 s): the retry then waits for that outcome itself.',
    retry: 'after Retry-After',
    example: {
      title: 'Payment in progress',
      detail: 'A request for this payment is still being processed. Retry after the delay to get its outcome.',
      answeredBy: 'requestKey',
    },
  },
  'duplicate-request': {
    name: 'Duplicate request',
    status: 409,
    means:
      'This request repeats one that was already made, and the server answers that and nothing more: not what became of the first (请勿重复提交). It is the lab’s wrong answer to a duplicate (`answers.duplicate: error`), there to be watched: a retrying client cannot tell it from “in progress”, retries until it gives up, and never learns whether it paid. By default a duplicate gets the first request’s outcome instead.',
    todo: 'Read the order (GET /api/orders/ and its number) to learn what became of the payment; do not pay again under a new key.',
    retry: 'no',
    example: {
      title: 'Duplicate request',
      detail: 'This request was already submitted. Do not submit it twice.',
      answeredBy: 'requestKey',
    },
  },
  'order-in-progress': {
    name: 'Order creation in progress',
    status: 409,
    means: 'A POST /api/orders with this Idempotency-Key is still running. No second order was created.',
    todo: 'Wait as long as Retry-After says (1 s), then send the same request with the same key: you get the order.',
    retry: 'after Retry-After',
    example: { title: 'Order creation in progress', detail: 'An order with this Idempotency-Key is being created.' },
  },
  'already-submitted': {
    name: 'Checkout token already used',
    status: 409,
    means:
      'The one-time Checkout-Token was already used, has expired, or belongs to another caller (layer 1). Nothing was charged by this request.',
    todo: 'Read the order to see its outcome; to pay again, get a new token (GET /api/tokens) or reload the checkout page.',
    retry: 'after reloading the page',
    example: {
      title: 'Checkout token already used',
      detail: 'This Checkout-Token was already used, has expired, or belongs to another caller. Nothing was charged.',
      errors: [{ field: 'Checkout-Token', message: 'was already used, has expired or is not yours' }],
    },
  },
  'card-declined': {
    name: 'Card declined',
    status: 402,
    means: 'The bank declined the card. This is the payment’s final outcome: it is stored and replayed to every retry.',
    todo: 'Do not retry with the same key: the answer will not change. Ask the customer for another card, and pay with a new key.',
    retry: 'no',
    example: {
      title: 'Card declined',
      detail: 'The bank declined the card: insufficient funds. Nothing was charged.',
      orderNo: 'ord_0123456789abcdef',
      amountCents: 4200,
      reason: 'insufficient funds',
      paymentStatus: 'DECLINED',
    },
  },
  'bank-unavailable': {
    name: 'Bank unavailable',
    status: 503,
    means: 'The bank failed before charging. Nothing moved, and every claim was released.',
    todo: 'Retry after Retry-After with the same Idempotency-Key.',
    retry: 'after Retry-After',
    example: {
      title: 'Bank unavailable',
      detail: 'The bank could not be reached. Nothing was charged. Retry with the same Idempotency-Key.',
    },
  },
  'failed-after-bank': {
    name: 'Payment failed after the bank answered',
    status: 500,
    means:
      'The bank answered this payment (the card may have been charged), and then a step after it failed: the notification of a downstream system. The claims on the payment are not given back once money may have moved: its outcome is kept on your Idempotency-Key.',
    todo: 'Retry after Retry-After with the same Idempotency-Key: the retry answers with the payment’s outcome, and charges nothing again.',
    retry: 'after Retry-After',
    example: {
      title: 'Payment failed after the bank answered',
      detail: 'The bank answered, then a step after it failed. Retry with the same Idempotency-Key to get the outcome.',
    },
  },
  'service-unavailable': {
    name: 'Service unavailable',
    status: 503,
    means:
      'Redis or PostgreSQL, which the defences need, is down. Payments are refused rather than run without their defences (fail closed); nothing was charged.',
    todo: 'Retry after Retry-After with the same Idempotency-Key.',
    retry: 'after Retry-After',
    example: { title: 'Service unavailable', detail: 'redis is unavailable; try again shortly', service: 'redis' },
  },
  'order-not-found': {
    name: 'Order not found',
    status: 404,
    means: 'There is no order with this number.',
    todo: 'Check the order number (ord_ and 16 characters); create the order first with POST /api/orders.',
    retry: 'no',
    example: { title: 'Order not found', detail: 'There is no such order.' },
  },
  'refund-in-progress': {
    name: 'Refund in progress',
    status: 409,
    means:
      'A request for this refund (this Idempotency-Key, or the same refund from another caller) is still running, or its outcome is being confirmed with the bank. Nothing new was started.',
    todo: 'Wait as long as Retry-After says (1 s), then send the same request with the same key: you get the refund’s outcome once it is known.',
    retry: 'after Retry-After',
    example: {
      title: 'Refund in progress',
      detail: 'A request for this refund is still being processed. Retry after the delay to get its outcome.',
      answeredBy: 'requestKey',
    },
  },
  'order-not-paid': {
    name: 'The order is not paid',
    status: 422,
    means: 'Only a paid order can be refunded: this one is not (yet). Nothing was refunded, and the key was left free.',
    todo: 'Pay the order first (POST /api/payments), or refund the order that was paid.',
    retry: 'after fixing the request',
    example: {
      title: 'The order is not paid',
      detail: 'The order is PENDING: only a paid order can be refunded.',
      orderStatus: 'PENDING',
    },
  },
  'refund-exceeds-charge': {
    name: 'More than is left to refund',
    status: 422,
    means:
      'The refunds of this order, made, under way or in doubt, and this one would come to more than was charged: the merchant’s ledger (refunded ≤ charged, a constraint the database enforces) refused it before the bank. Nothing was refunded, and the key was left free. `leftCents` is what is left.',
    todo: 'Refund at most leftCents, with a new request id (a new refund is a new intent).',
    retry: 'after fixing the request',
    example: {
      title: 'More than is left to refund',
      detail: 'Only 1200 cents are left to refund on this order.',
      leftCents: 1200,
      errors: [{ field: 'amountCents', message: 'must be at most 1200, what is left to refund' }],
    },
  },
  'refund-refused': {
    name: 'Refund refused by the bank',
    status: 422,
    means:
      'The bank refused this refund: it was more than what is left of the charge. This is the refund’s final outcome: it is stored and replayed to every retry.',
    todo: 'Do not retry with the same key: the answer will not change. Read the order (its refunds) and ask for what is left, with a new request id.',
    retry: 'no',
    example: {
      title: 'Refund refused by the bank',
      detail: 'The bank refused this refund: it is more than what is left of the charge. Nothing was refunded.',
      orderNo: 'ord_0123456789abcdef',
      amountCents: 3000,
      reason: 'exceedsCharge',
      refundStatus: 'FAILED',
    },
  },
  'refund-amount-mismatch': {
    name: 'This refund is for another amount',
    status: 422,
    means:
      'A refund with this identity was already asked for with another amount: one refund is for one amount (a second refund is a new intent, with a request id of its own). Nothing was refunded.',
    todo: 'Send the refund’s own amount to retry it, or a new request id for a new refund.',
    retry: 'after fixing the request',
    example: {
      title: 'This refund is for another amount',
      detail: 'This refund was asked for with 500 cents.',
      errors: [{ field: 'amountCents', message: 'must be the refund’s amount, 500' }],
    },
  },
  'amount-mismatch': {
    name: 'Amount does not match the order',
    status: 422,
    means: 'The payment’s amountCents is not the order’s amount. Nothing was charged and the key was left free.',
    todo: 'Send the order’s amount (GET /api/orders/{orderNo}).',
    retry: 'after fixing the request',
    example: {
      title: 'Amount does not match the order',
      detail: 'The order is for 4200 cents.',
      errors: [{ field: 'amountCents', message: "must be the order's amount, 4200" }],
    },
  },
  validation: {
    name: 'Invalid request',
    status: 400,
    means: 'A field of the body or the query is missing or invalid; `errors` names each one (dotted paths).',
    todo: 'Fix the fields named in `errors`.',
    retry: 'after fixing the request',
    example: {
      title: 'Invalid request',
      detail: 'Invalid field(s): amountCents',
      errors: [{ field: 'amountCents', message: 'must be a whole number of cents' }],
    },
  },
  'malformed-json': {
    name: 'Malformed JSON',
    status: 400,
    means: 'The body is empty or is not valid JSON.',
    todo: 'Send a JSON object with Content-Type: application/json.',
    retry: 'after fixing the request',
    example: {
      title: 'Malformed JSON',
      detail: 'The request body is not valid JSON.',
      errors: [{ field: '(body)', message: 'The request body is not valid JSON.' }],
    },
  },
  'body-too-large': {
    name: 'Request body too large',
    status: 413,
    means: 'The body is over the limit (16 KiB for the API and for the checkout form). It was not read further.',
    todo: 'Send a smaller body: no request of this API needs more.',
    retry: 'after fixing the request',
    example: { title: 'Request body too large', detail: 'The body must be at most 16384 bytes.' },
  },
  'checkout-token': {
    name: 'Checkout-Token malformed',
    status: 400,
    means: 'The Checkout-Token header is not a token this API issues (GET /api/tokens).',
    todo: 'Send the token exactly as GET /api/tokens returned it, or leave the header out for a service call.',
    retry: 'after fixing the request',
    example: {
      title: 'Checkout-Token malformed',
      errors: [{ field: 'Checkout-Token', message: 'is not a checkout token' }],
    },
  },
  'missing-caller': {
    name: 'Who is calling?',
    status: 400,
    means: 'Keys, tokens and stored outcomes are scoped per caller, and this request named none.',
    todo: 'Send an X-Client-Id header (a service), or the session cookie (a browser).',
    retry: 'after fixing the request',
    example: {
      title: 'Who is calling?',
      detail: 'Send an X-Client-Id header (services) or the session cookie (browsers).',
      errors: [{ field: 'X-Client-Id', message: 'is required' }],
    },
  },
  'invalid-client-id': {
    name: 'Invalid X-Client-Id',
    status: 400,
    means: 'X-Client-Id must be 1-64 characters: letters, digits, ".", "_" or "-".',
    todo: 'Send a valid X-Client-Id, the same on every call of one caller.',
    retry: 'after fixing the request',
    example: {
      title: 'Invalid X-Client-Id',
      errors: [{ field: 'X-Client-Id', message: 'must be 1-64 characters: letters, digits, ".", "_" or "-"' }],
    },
  },
  'lab-disabled': {
    name: 'The lab is turned off',
    status: 400,
    means: 'This server does not accept lab settings (LAB_ENABLED=false), so an order cannot carry its own.',
    todo: 'Create the order without `lab`.',
    retry: 'after fixing the request',
    example: {
      title: 'The lab is turned off',
      errors: [{ field: 'lab', message: 'is not accepted: the lab is turned off' }],
    },
  },
  'presenter-only': {
    name: 'The presenter’s action',
    status: 401,
    means:
      'The app is exposed to a network (a workshop room), and this action changes the demo for everyone: the global lab settings, their reset, the timeline, the room view, or a fault that stops the process.',
    todo: 'Send the lab secret (LAB_SECRET) as `Authorization: Bearer <secret>`, or open /lab/room?secret=… once in the browser. Attendees change their own lab instead.',
    retry: 'after fixing the request',
    example: {
      title: 'The presenter’s action',
      detail:
        'Changing the global lab settings changes the demo for everyone in the room: it needs the lab secret (LAB_SECRET) as a Bearer token.',
    },
  },
  'not-found': {
    name: 'Not found',
    status: 404,
    means: 'There is nothing at this address (the lab’s routes, when the lab is turned off).',
    todo: 'Check the address.',
    retry: 'no',
    example: { title: 'Not found' },
  },
  'gateway-timeout': {
    name: 'No instance answered in time',
    status: 504,
    means:
      'In the cluster, the gateway gave up on every instance it tried. A payment may still have been made by one of them.',
    todo: 'Retry with the same Idempotency-Key: the defences answer with the payment if there is one.',
    retry: 'after Retry-After',
    example: { title: 'No instance answered in time' },
  },
  'method-not-allowed': {
    name: 'Method not allowed',
    status: 405,
    means: 'This address exists, but does not take this method. The Allow header lists the methods it takes.',
    todo: 'Use one of the methods in Allow (the API reference lists each operation).',
    retry: 'after fixing the request',
    example: {
      title: 'Method not allowed',
      detail: 'DELETE is not allowed here; allowed: POST, OPTIONS.',
      allow: ['POST', 'OPTIONS'],
    },
  },
  'bad-path': {
    name: 'Malformed address',
    status: 400,
    means:
      'The path holds a percent sign that does not begin a valid escape of UTF-8 bytes (`%E0%A4%A`, `%zz`, `%C0%AF`), so it names no page and no resource.',
    todo: 'Percent-encode the path correctly (encodeURIComponent per segment).',
    retry: 'after fixing the request',
    example: { title: 'Malformed address', detail: 'The path is not valid percent-encoded UTF-8.' },
  },
  'cross-origin': {
    name: 'Form posted from another site',
    status: 403,
    means:
      'A server action (a form post) came from a page of another origin than the one it was sent to: the Origin header does not name the Host. This is what a cross-site request forgery looks like; it was not run.',
    todo: 'Submit the form from this site’s own pages. Behind a reverse proxy, forward the Host header the browser sent.',
    retry: 'no',
    example: {
      title: 'Form posted from another site',
      detail: 'The form came from http://evil.example, not from this site.',
    },
  },
  'malformed-action': {
    name: 'Malformed form post',
    status: 400,
    means:
      'A server action (a form post) whose body is not a form this app’s pages send: a multipart body that does not parse, or arguments that are not JSON. It was not run.',
    todo: 'Submit the form from the page; reload it if it is old.',
    retry: 'after reloading the page',
    example: { title: 'Malformed form post', detail: 'The body is not a well-formed multipart/form-data form.' },
  },
  'host-not-allowed': {
    name: 'Host not served here',
    status: 421,
    means:
      'The Host header names a site this server does not serve. A name made to point at this machine by another site (DNS rebinding) is refused, so that site’s scripts cannot read its pages. Loopback, the address the app listens on (HOST) and ALLOWED_HOSTS are served.',
    todo: 'Open the app by an address it serves; to serve another name, add it to ALLOWED_HOSTS.',
    retry: 'no',
    example: { title: 'Host not served here', detail: 'This server does not answer for attacker.example.' },
  },
  internal: {
    name: 'Internal error',
    status: 500,
    means:
      'Something failed on the server’s side that it did not expect. It is logged; the body never carries its details.',
    todo: 'Retry with the same Idempotency-Key; report it if it lasts.',
    retry: 'after Retry-After',
    example: { title: 'Internal error', detail: 'Something went wrong on our side.' },
  },
} as const satisfies Record<string, ProblemInfo>;

export type ProblemType = keyof typeof PROBLEM_TYPES;

/** Where a problem type's page is: a relative URI, resolved against the API's own address (RFC 9457 §3.1.1). */
export function problemTypeUri(type: ProblemType): string {
  return `/problems/${type}`;
}

export function isProblemType(name: string): name is ProblemType {
  return Object.hasOwn(PROBLEM_TYPES, name);
}
