// The glossary: the article's Chinese terms, the demo's English ones, the layer each belongs to and the code
// that implements it, so that an attendee can read the article and the demo side by side. Pure; what each term
// means is a message (glossary.entries.<id>), in both languages. lib/i18n/glossary.test.ts checks every path.
export type GlossaryEntry = {
  id: string;
  /** The article's word. */
  zh: string;
  /** The demo's word (the UI, the code, the docs). */
  en: string;
  /** The defence it names (0-5), if it is one. */
  layer?: 0 | 1 | 2 | 3 | 4 | 5;
  /** Where to read it in the code. */
  code: string[];
};

export const GLOSSARY: GlossaryEntry[] = [
  { id: 'idempotency', zh: '幂等', en: 'Idempotency', code: ['lib/payments/pay.ts'] },
  { id: 'duplicate', zh: '重复请求', en: 'Duplicate request', code: ['e2e/scenarios/matrix.ts'] },
  {
    id: 'pendingUi',
    zh: '防重复点击',
    en: 'Pending UI',
    layer: 0,
    code: ['app/checkout/[orderNo]/checkout-form.tsx'],
  },
  {
    id: 'token',
    zh: '一次性令牌（Token 机制）',
    en: 'One-time token',
    layer: 1,
    code: ['lib/defences/checkout-token/defence.ts', 'lib/defences/checkout-token/consume-token.lua'],
  },
  {
    id: 'requestKey',
    zh: '幂等键（request_id）',
    en: 'Request key (Idempotency-Key)',
    layer: 2,
    code: ['lib/defences/request-key/defence.ts', 'lib/defences/request-key/claim.lua'],
  },
  { id: 'businessKey', zh: '业务键', en: 'Business key', code: ['lib/defences/request-key/key-strategy.ts'] },
  {
    id: 'stateMachine',
    zh: '状态机（乐观锁）',
    en: 'State machine (conditional update)',
    layer: 3,
    code: ['lib/defences/order-claim/defence.ts', 'lib/defences/order-claim/transitions.ts'],
  },
  {
    id: 'uniqueConstraint',
    zh: '唯一约束（防重表）',
    en: 'Unique constraint (dedup table)',
    layer: 4,
    code: ['lib/defences/order-claim/store.ts', 'prisma/schema.prisma'],
  },
  {
    id: 'lastLine',
    zh: '兜底（最后一毫米）',
    en: 'The last millimetre',
    layer: 4,
    code: ['lib/defences/order-claim/store.ts'],
  },
  {
    id: 'bankKey',
    zh: '银行的幂等键',
    en: 'The bank’s idempotency key',
    layer: 5,
    code: ['lib/defences/bank-key/defence.ts', 'lib/payments/bank.ts'],
  },
  { id: 'replay', zh: '返回结果的幂等', en: 'Result idempotency (replay)', code: ['lib/defences/outcome.ts'] },
  { id: 'release', zh: '释放标记', en: 'Releasing the claim', code: ['lib/defences/request-key/release.lua'] },
  { id: 'claim', zh: '幂等标记（处理中）', en: 'Claim (processing)', code: ['lib/defences/request-key/claim.lua'] },
  { id: 'lease', zh: '租约与围栏令牌', en: 'Lease and fencing token', code: ['lib/defences/fencing.ts'] },
  { id: 'reconcile', zh: '对账', en: 'Reconciliation', code: ['lib/payments/reconcile.ts'] },
  { id: 'gatewayRetry', zh: '网关超时重试', en: 'Gateway retry', code: ['scripts/lib/nginx-config.ts'] },
  { id: 'failover', zh: '故障转移', en: 'Failover', code: ['scripts/lib/launcher.ts'] },
  { id: 'redelivery', zh: '消息重复投递', en: 'Queue redelivery', code: ['lib/events/receipts.ts'] },
  { id: 'refund', zh: '退款', en: 'Refund', code: ['lib/refunds/refund.ts', 'lib/defences/refund-claim/store.ts'] },
  {
    id: 'requestId',
    zh: '请求号',
    en: 'Request id',
    code: ['lib/refunds/requests.ts', 'lib/defences/request-key/key-strategy.ts'],
  },
  {
    id: 'ledger',
    zh: '退款账（已退 ≤ 已扣）',
    en: 'The ledger (refunded ≤ charged)',
    code: ['prisma/migrations/20261204181803_refunds/migration.sql'],
  },
];
