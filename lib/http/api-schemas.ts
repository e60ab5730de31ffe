// The zod schemas of the HTTP API: the routes validate with them, and lib/http/openapi.ts documents them
// (zod-openapi reads `.meta()`), so the reference cannot say something the routes do not do.
import { z } from 'zod';
import { PaymentOutcomeSchema } from '../defences/outcome.ts';
import { RefundOutcomeSchema } from '../defences/refund.ts';
import { GatewayRecordSchema } from '../lab/gateway.ts';
import { LabSettingsPatchSchema, LabSettingsSchema } from '../lab/settings.ts';
import { AmountCentsSchema, OrderNoSchema } from '../payments/order-no.ts';

/** The order number every example uses (the contract test swaps in a real order's). */
export const EXAMPLE_ORDER_NO = 'ord_0123456789abcdef';
/** An order number that exists nowhere (the 404 examples). */
export const UNKNOWN_ORDER_NO = 'ord_0000000000000000';

export const OrderNo = OrderNoSchema.meta({
  id: 'OrderNo',
  description: 'The order number: the business identity of the payment.',
  example: EXAMPLE_ORDER_NO,
});
export const AmountCents = AmountCentsSchema.meta({
  id: 'AmountCents',
  description: 'An amount in cents: a whole number from 1 to 100000000.',
  example: 4200,
});

export const LabPatch = LabSettingsPatchSchema.meta({
  id: 'LabSettingsPatch',
  description:
    'A partial change to the lab settings: which defences are on, the bank’s faults, the claims’ lease and when they are given back, the key strategy, the gateway.',
});
export const Lab = LabSettingsSchema.meta({ id: 'LabSettings', description: 'The whole lab settings.' });

export const CreateOrderSchema = z
  .strictObject({
    amountCents: AmountCents.optional(),
    /** Lab settings for this order only, so scenarios with different settings can run side by side. */
    lab: LabPatch.optional(),
  })
  .meta({
    id: 'CreateOrder',
    description: 'A new order: its amount (4200 cents by default) and its own lab settings.',
  });

export const PaymentRequestSchema = z
  .strictObject({
    orderNo: OrderNo,
    amountCents: AmountCents,
    /**
     * When the caller sent this attempt, as many SDKs stamp every request (epoch milliseconds, or an RFC 3339
     * date-time). Not part of the payment: a retry that stamps it anew is the same payment (the fingerprint
     * leaves it out), and the key is never made from it, except by the lab's `paramHash` strategy, to show why.
     */
    requestedAt: z
      .union([z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER), z.iso.datetime({ offset: true })], {
        message: 'must be epoch milliseconds or an RFC 3339 date-time',
      })
      .optional()
      .meta({
        description:
          'When this attempt was sent (epoch ms or RFC 3339). Not part of the payment: a retry may stamp it anew.',
      }),
  })
  .meta({ id: 'PaymentRequest', description: 'Pay an order: its number and its amount.' });

export const RefundRequestSchema = z
  .strictObject({
    orderNo: OrderNo,
    amountCents: AmountCents.meta({ description: 'How much to give back: at most what is left of the charge.' }),
    /**
     * When the caller sent this attempt (epoch ms or RFC 3339), as many SDKs stamp every request. Not part of the
     * refund: a retry may stamp it anew; only the lab's `paramHash` strategy makes the refund's identity of it.
     */
    requestedAt: z
      .union([z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER), z.iso.datetime({ offset: true })], {
        message: 'must be epoch milliseconds or an RFC 3339 date-time',
      })
      .optional()
      .meta({ description: 'When this attempt was sent. Not part of the refund: a retry may stamp it anew.' }),
  })
  .meta({
    id: 'RefundRequest',
    description:
      'Refund part of a paid order. The Idempotency-Key is the refund’s request id: create it once for this refund, keep it, send it on every retry; a second refund is a new id.',
  });

export const Refund = RefundOutcomeSchema.options[0].meta({
  id: 'Refund',
  description: 'A refund the bank made: its id, its amount.',
  example: {
    status: 'SUCCEEDED',
    orderNo: EXAMPLE_ORDER_NO,
    amountCents: 500,
    refundId: 're_5f1d3c0a9b8e7d6c5b4a3921',
    refundedAt: '2026-11-30T09:05:00.000Z',
  },
});

export const OrderSummary = z
  .object({
    orderNo: OrderNo,
    amountCents: AmountCents,
    status: z.enum(['PENDING', 'PROCESSING', 'PAID', 'DECLINED', 'UNKNOWN']),
    checkoutUrl: z.string().meta({
      description:
        'The checkout page for the customer. For an order of a named caller it carries the order’s join code: whoever opens it may pay the order (give it only to the customer).',
    }),
  })
  .meta({
    id: 'Order',
    example: {
      orderNo: EXAMPLE_ORDER_NO,
      amountCents: 4200,
      status: 'PENDING',
      checkoutUrl: `/checkout/${EXAMPLE_ORDER_NO}?join=Zm9yIHRoZSBjdXN0b21lcg`,
    },
  });

const Charge = z
  .object({ id: z.string(), amountCents: z.number().int(), createdAt: z.string() })
  .meta({ id: 'Charge', description: 'A charge on the card statement, as the card network recorded it.' });

const BankRefund = z
  .object({ id: z.string(), chargeId: z.string(), amountCents: z.number().int(), createdAt: z.string() })
  .meta({ id: 'BankRefund', description: 'A refund on the card statement, as the card network recorded it.' });

export const OrderView = z
  .object({
    orderNo: OrderNo,
    amountCents: AmountCents,
    status: z.enum(['PENDING', 'PROCESSING', 'PAID', 'DECLINED', 'UNKNOWN']),
    charges: z.array(Charge),
    refunds: z.array(BankRefund).meta({ description: 'The refunds the card network made of its charges.' }),
    refundedCents: z.number().int().meta({
      description: 'The merchant’s ledger: refunds made, under way or in doubt. Never more than amountCents.',
    }),
  })
  .meta({ id: 'OrderWithCharges', description: 'The order, and what the card network recorded for it.' });

export const Payment = PaymentOutcomeSchema.options[0].meta({
  id: 'Payment',
  description: 'A paid order: the charge that paid it.',
  example: {
    status: 'PAID',
    orderNo: EXAMPLE_ORDER_NO,
    amountCents: 4200,
    chargeId: 'ch_5f1d3c0a9b8e7d6c5b4a3921',
    paidAt: '2026-11-30T09:00:00.000Z',
  },
});

export const CheckoutToken = z
  .object({ token: z.string(), expiresAt: z.string() })
  .meta({ id: 'CheckoutToken', description: 'A one-time checkout token (layer 1) for this order and this caller.' });

export const Health = z
  .object({
    status: z.enum(['ok', 'degraded']),
    redis: z.enum(['ok', 'near-full']).meta({
      description: 'near-full: at 90% of its maxmemory or more (then status is degraded); at 100% health is 503.',
    }),
    database: z.literal('ok'),
    redisMemory: z
      .object({ usedBytes: z.number().int(), maxBytes: z.number().int() })
      .optional()
      .meta({ description: 'When Redis is nearly full: its used_memory and maxmemory.' }),
  })
  .meta({ id: 'Health' });

export const Problem = z
  .object({
    type: z.string().meta({ description: 'The page that documents this problem type (/problems/{name}).' }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional().meta({
      description:
        'For a person, in the language Accept-Language asks for (English, or Chinese: zh, zh-CN …); Content-Language says which.',
    }),
    errors: z
      .array(
        z.object({
          field: z.string().meta({ description: 'The field, the same in every language.' }),
          message: z.string().meta({ description: 'For a person, in the language of `detail`.' }),
        }),
      )
      .optional(),
  })
  .catchall(z.unknown())
  .meta({
    id: 'Problem',
    description:
      'RFC 9457 problem details. Extensions vary by type (see its page). `type`, `title`, `status`, the extensions and `errors[].field` are for programs and never change with the language.',
  });

export const GatewayViewSchema = z
  .union([GatewayRecordSchema.extend({ running: z.literal(true) }), z.object({ running: z.literal(false) })])
  .meta({
    id: 'GatewayView',
    description:
      'The cluster’s gateway: the nginx configuration written from the lab’s gateway settings, its path and when nginx was last reloaded with it; `running: false` without a cluster.',
  });

export const TimelinePage = z
  .object({ events: z.array(z.object({ id: z.string(), streamId: z.string() }).catchall(z.unknown())) })
  .meta({ id: 'TimelinePage', description: 'The lab timeline’s events after the `after` cursor.' });
