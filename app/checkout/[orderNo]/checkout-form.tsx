'use client';
import { useActionState, useEffect, useRef } from 'react';
import { activeFaults, answererName, colourOf, KEY_STRATEGY_INFO, SWITCHES } from '@/lib/lab/layer-info';
import type { LabSettings } from '@/lib/lab/settings';
import { reportSwallowedClick } from '@/lib/ui/report-swallowed-click';
import { usePolling } from '@/lib/ui/use-polling';
import { payOrder } from './actions';
import { chargesInWords, useLiveOrder } from './live-order';
import { describePayState, type PayState } from './pay-state';

type Props = {
  orderNo: string;
  amount: string;
  /** The one-time token issued when this page loaded (layer 1). */
  token: string;
  settings: LabSettings;
  labEnabled: boolean;
};

export function CheckoutForm({ orderNo, amount, token, settings: initialSettings, labEnabled }: Props) {
  const [state, formAction, isPending] = useActionState<PayState, FormData>(payOrder, { status: 'idle', token });
  // The lab can switch the pending UI (and the layers) while this page is open.
  const settings =
    usePolling<LabSettings>(labEnabled ? `/api/lab/config?orderNo=${orderNo}` : null, 1500, initialSettings) ??
    initialSettings;
  const pendingUi = settings.layers.pendingUi;

  // The token for the next submit: a new one after a failure that released everything, else the page's.
  const tokenRef = useRef(token);
  if (state.token) tokenRef.current = state.token;

  // Set synchronously on submit, so a second click or Enter in the same instant is refused too.
  const inFlight = useRef(false);
  useEffect(() => {
    if (!isPending) inFlight.current = false;
  }, [isPending]);
  const busy = isPending;
  const blocked = pendingUi && busy;

  // Every submit is stamped with its time and a key minted for it, as many real forms do. Which of them
  // layer 2's key is made of is the lab's key strategy (the server decides; the form sends both).
  const submit = (formData: FormData) => {
    formData.set('submittedAt', String(Date.now()));
    formData.set('submitKey', mintSubmitKey());
    formData.set('resubmit', markSubmitted(String(formData.get('token') ?? '')) ? '1' : '0');
    formAction(formData);
  };

  const onSubmit = (event: React.FormEvent<HTMLFormElement>) => {
    if (pendingUi && (inFlight.current || isPending)) {
      event.preventDefault(); // layer 0: no second request leaves this page
      if (labEnabled) reportSwallowedClick(orderNo); // … and the lab's timeline shows the click it swallowed
      return;
    }
    inFlight.current = true;
  };

  const order = useLiveOrder();
  const message = describePayState(state, amount, { pending: busy, order });
  const faults = activeFaults(settings);

  return (
    <form action={submit} onSubmit={onSubmit} aria-busy={busy} aria-describedby="pay-outcome" className="pay-form">
      <input type="hidden" name="orderNo" value={orderNo} />
      <input type="hidden" name="token" value={tokenRef.current} />
      <button type="submit" className="button pay-button" aria-disabled={blocked}>
        {blocked ? `Paying ${amount}…` : `Pay ${amount}`}
      </button>
      <p className="pay-charges" data-testid="pay-charges">
        Card statement:{' '}
        <span className={order.charges.length > 1 ? 'alarm' : undefined}>{chargesInWords(order.charges.length)}</span>
      </p>
      <p className="muted small" aria-hidden={!busy}>
        {busy
          ? pendingUi
            ? 'Payment in flight: the button is disabled until it answers.'
            : 'Payment in flight, and the button is still live (pending UI is off).'
          : '\u00a0'}
      </p>
      <div
        id="pay-outcome"
        role="status"
        aria-live="polite"
        // What this request was answered (the scenarios read it); the words may say more, e.g. "charged twice".
        data-answer={busy ? 'pending' : state.status}
        className={`outcome ${message ? `tone-${message.tone}` : ''}`}
      >
        {message ? (
          <>
            <strong>{/[.!?…]$/.test(message.title) ? message.title : `${message.title}.`}</strong> {message.body}
            {message.reload ? (
              <>
                {' '}
                <a href={`/checkout/${orderNo}`}>Reload to pay</a>
              </>
            ) : null}
            {message.answeredBy ? (
              <span className="answered-by" style={{ borderColor: colourOf(message.answeredBy as never) }}>
                Answered by {answererName(message.answeredBy)}
              </span>
            ) : null}
          </>
        ) : (
          <span className="muted">No payment sent yet.</span>
        )}
      </div>
      <ul className="defences" aria-label="Defences for this order">
        {SWITCHES.map((layer) => (
          <li
            key={layer.key}
            className={settings.layers[layer.key] ? 'on' : 'off'}
            style={{ borderColor: colourOf(layer.key) }}
          >
            <span
              className="dot"
              style={{
                background: settings.layers[layer.key] ? colourOf(layer.key) : 'transparent',
                borderColor: colourOf(layer.key),
              }}
            />
            {layer.number} {layer.name}: {settings.layers[layer.key] ? 'on' : 'off'}
            {layer.key === 'requestKey' && settings.keys.strategy !== 'business'
              ? ` (key: ${KEY_STRATEGY_INFO[settings.keys.strategy].name.toLowerCase()})`
              : null}
          </li>
        ))}
      </ul>
      {faults.length > 0 ? (
        <ul className="defences faults-on" aria-label="Faults the lab injects for this order">
          {faults.map((fault) => (
            <li key={fault} className="fault">
              Fault: {fault}
            </li>
          ))}
        </ul>
      ) : null}
    </form>
  );
}

/**
 * Records in this tab that the page sent its token, and says whether it had before: a refused token is then
 * a second submit ("already submitted"), not a stale page. sessionStorage survives the back button's
 * restored page, which remounts the form.
 */
function markSubmitted(token: string): boolean {
  const before = submittedHere.has(token);
  submittedHere.add(token);
  try {
    const key = `pay-once:submitted:${token}`;
    const stored = window.sessionStorage.getItem(key) !== null;
    window.sessionStorage.setItem(key, '1');
    return before || stored;
  } catch {
    return before; // storage refused (some private modes): this page's memory still knows
  }
}
const submittedHere = new Set<string>();

/** 128 random bits as hex (getRandomValues works outside secure contexts too, unlike randomUUID). */
function mintSubmitKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
