'use client';
// The refund form: an amount, and the draft's request id, which every submit of this form sends (a resubmit, a
// reload, a retry: one refund). Layer 0 as the Pay button has it: with the lab's pending UI on, no second request
// leaves the page while one is in flight; with it off, a second click is a second request.
import { useLocale, useTranslations } from 'next-intl';
import { useActionState, useEffect, useId, useRef, useState } from 'react';
import { formatCents } from '@/lib/format';
import type { LabSettings } from '@/lib/lab/settings';
import { reportSwallowedClick } from '@/lib/ui/report-swallowed-click';
import { usePolling } from '@/lib/ui/use-polling';
import { useLiveOrder, useRefreshOrder } from '../live-order';
import { refundOrder } from './actions';
import { RefundOutcome } from './refund-outcome';
import { centsOf, leftToRefund, type RefundState } from './refund-state';
import { refundsOf } from './refund-statement';

type Props = {
  orderNo: string;
  /** The draft's id: the refund's identity. */
  requestId: string;
  settings: LabSettings;
  labEnabled: boolean;
};

export function RefundForm({ orderNo, requestId, settings: initialSettings, labEnabled }: Props) {
  const [state, formAction, isPending] = useActionState<RefundState, FormData>(refundOrAnswerLost, {
    status: 'idle',
  });
  // The lab can switch the pending UI while this page is open.
  const settings =
    usePolling<LabSettings>(labEnabled ? `/api/lab/config?orderNo=${orderNo}` : null, 1500, initialSettings) ??
    initialSettings;
  const pendingUi = settings.layers.pendingUi;
  const blocked = pendingUi && isPending;

  // Set synchronously on submit, so a second click or Enter in the same instant is refused too.
  const inFlight = useRef(false);
  useEffect(() => {
    if (!isPending) inFlight.current = false;
  }, [isPending]);

  // Controlled, so that the amount stays in the field after each answer: a resubmit sends what was asked.
  const [amount, setAmount] = useState('');
  const [amountRefused, setAmountRefused] = useState(false);

  // Every submit is stamped with its time, as many real forms do: the lab's paramHash key hashes it.
  const submit = (formData: FormData) => {
    formData.set('submittedAt', String(Date.now()));
    formAction(formData);
  };

  const onSubmit = (event: React.FormEvent<HTMLFormElement>) => {
    if (pendingUi && (inFlight.current || isPending)) {
      event.preventDefault(); // layer 0: no second request leaves this page
      if (labEnabled) reportSwallowedClick(orderNo); // … and the lab's timeline shows the click it swallowed
      return;
    }
    if (centsOf(amount) === undefined) {
      event.preventDefault(); // nothing to send: the field says why
      setAmountRefused(true);
      return;
    }
    setAmountRefused(false);
    inFlight.current = true;
  };

  // An answer has come: the refunds beside it are read again at once.
  const refresh = useRefreshOrder();
  useEffect(() => {
    if (state.status !== 'idle') refresh();
  }, [state, refresh]);

  const t = useTranslations('refunds');
  const fieldError = amountRefused || (state.status === 'invalid' && state.reason === 'amount');

  return (
    <form
      action={submit}
      onSubmit={onSubmit}
      aria-busy={isPending}
      aria-describedby="refund-outcome"
      className="pay-form"
    >
      <input type="hidden" name="orderNo" value={orderNo} />
      <input type="hidden" name="requestId" value={requestId} />
      <AmountField value={amount} onChange={setAmount} refused={fieldError} />
      <button type="submit" className="button pay-button" aria-disabled={blocked}>
        {blocked ? t('form.refunding') : t('form.button')}
      </button>
      <p className="muted small" aria-hidden={!isPending}>
        {isPending ? (pendingUi ? t('form.inFlightGuarded') : t('form.inFlightLive')) : '\u00a0'}
      </p>
      <RefundOutcome state={state} pending={isPending} />
    </form>
  );
}

/** The amount in dollars, what is left beside it, and why it was refused (read out as it changes). */
function AmountField({
  value,
  onChange,
  refused,
}: {
  value: string;
  onChange: (typed: string) => void;
  refused: boolean;
}) {
  const t = useTranslations('refunds');
  const locale = useLocale();
  const order = useLiveOrder();
  const left = formatCents(leftToRefund({ amountCents: order.amountCents, ...refundsOf(order) }), locale);
  const ids = { field: useId(), hint: useId(), error: useId() };
  return (
    <div className="field">
      <label htmlFor={ids.field}>{t('form.amount')}</label>
      <input
        id={ids.field}
        name="amount"
        inputMode="decimal"
        autoComplete="off"
        value={value}
        onChange={(event) => onChange(event.target.value)}
        aria-invalid={refused}
        aria-describedby={`${ids.hint} ${ids.error}`}
      />
      <p id={ids.hint} className="small muted">
        {t('form.amountHint', { left })}
      </p>
      <p id={ids.error} className="small alarm" aria-live="polite">
        {refused ? t('form.amountInvalid') : null}
      </p>
    </div>
  );
}

/**
 * The action, or "no answer" when it never answered: its process died while it ran (the lab's crash fault kills
 * the app). The refund may have been made: the page says so beside the statement, not on the error page.
 */
async function refundOrAnswerLost(previous: RefundState, formData: FormData): Promise<RefundState> {
  try {
    return await refundOrder(previous, formData);
  } catch (error) {
    if (error instanceof TypeError) return { status: 'connection_lost' }; // fetch's "Failed to fetch"
    throw error;
  }
}
