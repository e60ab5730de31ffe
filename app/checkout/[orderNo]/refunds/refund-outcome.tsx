'use client';
// The refund form's outcome region: what the pipeline answered this submit, in words, and who answered it.
import { useLocale, useTranslations } from 'next-intl';
import { formatCents } from '@/lib/format';
import { answererOf, colourOf } from '@/lib/lab/layer-info';
import { useLiveOrder } from '../live-order';
import { describeRefundState, type RefundState } from './refund-state';
import { refundsOf } from './refund-statement';

export function RefundOutcome({ state, pending }: { state: RefundState; pending: boolean }) {
  const t = useTranslations('refunds');
  const layers = useTranslations('layers');
  const locale = useLocale();
  const order = useLiveOrder();
  const refundIds = refundsOf(order).refunds.map((refund) => refund.id);
  const message = describeRefundState(state, { pending, refundIds }, (cents) => formatCents(cents, locale));
  // "layer 2, request key", "the bank": who answered, in the reader's words (English writes a name in lower case).
  const answerer = (answeredBy: string) => {
    const who = answererOf(answeredBy);
    return who.key === 'layer'
      ? layers('answerer.layer', {
          number: who.values.number,
          name: layers(`names.${who.values.layer}`).toLocaleLowerCase(locale),
        })
      : layers(`answerer.${who.key}`);
  };
  return (
    <div
      id="refund-outcome"
      role="status"
      aria-live="polite"
      // What this submit was answered (the spec reads it); the words may still say "Refunding…" meanwhile.
      data-answer={pending ? 'pending' : state.status}
      className={`outcome ${message ? `tone-${message.tone}` : ''}`}
    >
      {message ? (
        <>
          {t.rich('outcome.said', {
            title: t(message.title),
            body: () => t.rich(message.body, { ...message.values, code: (words) => <code>{words}</code> }),
            strong: (words) => <strong>{words}</strong>,
          })}
          {message.answeredBy ? (
            <span className="answered-by" style={{ borderColor: colourOf(message.answeredBy as never) }}>
              {t('outcome.answeredBy', { who: answerer(message.answeredBy) })}
            </span>
          ) : null}
        </>
      ) : (
        <span className="muted">{t('outcome.none')}</span>
      )}
    </div>
  );
}
