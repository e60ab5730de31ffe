'use client';
import { useLocale, useTranslations } from 'next-intl';
import { useActionState, useEffect, useRef } from 'react';
import { activeFaultChips, answererOf, colourOf, SWITCHES } from '@/lib/lab/layer-info';
import type { LabSettings } from '@/lib/lab/settings';
import { reportSwallowedClick } from '@/lib/ui/report-swallowed-click';
import { usePolling } from '@/lib/ui/use-polling';
import { payOrder } from './actions';
import { useLiveOrder, useRefreshOrder } from './live-order';
import { chargesInWords, describePayState, type OutcomeMessage, type PayState } from './pay-state';
import { useSay } from './use-say';

type Props = {
  orderNo: string;
  /** The order's amount, formatted for the reader. */
  amount: string;
  /** The one-time token issued when this page loaded (layer 1). */
  token: string;
  settings: LabSettings;
  labEnabled: boolean;
};

export function CheckoutForm({ orderNo, amount, token, settings: initialSettings, labEnabled }: Props) {
  const [state, formAction, isPending] = useActionState<PayState, FormData>(payOrAnswerLost, { status: 'idle', token });
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

  const t = useTranslations('checkout');
  const say = useSay();
  const order = useLiveOrder();
  // An answer has come: the statement reads the order again at once, and until it shows the charge the
  // outcome does not say "paid" (pay-state.ts).
  const refresh = useRefreshOrder();
  useEffect(() => {
    if (state.status !== 'idle') refresh();
  }, [state, refresh]);
  const message = describePayState(state, amount, { pending: busy, order });

  return (
    <form action={submit} onSubmit={onSubmit} aria-busy={busy} aria-describedby="pay-outcome" className="pay-form">
      <input type="hidden" name="orderNo" value={orderNo} />
      <input type="hidden" name="token" value={tokenRef.current} />
      <button type="submit" className="button pay-button" aria-disabled={blocked}>
        {blocked ? t('pay.paying', { amount }) : t('pay.button', { amount })}
      </button>
      <p className="pay-charges" data-testid="pay-charges">
        {t.rich('charges.beside', {
          count: () => (
            <span className={order.charges.length > 1 ? 'alarm' : undefined}>
              {say(chargesInWords(order.charges.length))}
            </span>
          ),
        })}
      </p>
      <p className="muted small" aria-hidden={!busy}>
        {busy ? (pendingUi ? t('inFlight.guarded') : t('inFlight.live')) : '\u00a0'}
      </p>
      <Outcome orderNo={orderNo} busy={busy} state={state} message={message} />
      <DefenceChips settings={settings} />
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

/** The outcome region: what this request was answered, in words, and who answered it. */
function Outcome({
  orderNo,
  busy,
  state,
  message,
}: {
  orderNo: string;
  busy: boolean;
  state: PayState;
  message: OutcomeMessage | undefined;
}) {
  const t = useTranslations('checkout');
  const layers = useTranslations('layers');
  const locale = useLocale();
  const say = useSay();
  const title = message ? say(message.title) : '';
  // "layer 1, one-time token", "the bank": who answered, in the reader's words (English writes a name in lower case).
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
      id="pay-outcome"
      role="status"
      aria-live="polite"
      // What this request was answered (the scenarios read it); the words may say more, e.g. "charged twice".
      data-answer={busy ? 'pending' : state.status}
      className={`outcome ${message ? `tone-${message.tone}` : ''}`}
    >
      {message ? (
        <>
          {t.rich('outcome.said', {
            title: /[.!?…。！？]$/.test(title) ? title : t('outcome.sentence', { title }),
            body: say(message.body),
            strong: (words) => <strong>{words}</strong>,
          })}
          {message.reload ? (
            <>
              {' '}
              <a href={`/checkout/${orderNo}`}>{t('outcome.reload')}</a>
            </>
          ) : null}
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

/** Which defences are on for this order (and the key strategy, when it is not the business one), and its faults. */
function DefenceChips({ settings }: { settings: LabSettings }) {
  const t = useTranslations('checkout');
  const layers = useTranslations('layers');
  const locale = useLocale();
  const faults = activeFaultChips(settings);
  return (
    <>
      <ul className="defences" aria-label={t('defences.label')}>
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
            {t(settings.layers[layer.key] ? 'defences.on' : 'defences.off', {
              number: layer.number,
              name: layers(`names.${layer.key}`),
            })}
            {layer.key === 'requestKey' && settings.keys.strategy !== 'business'
              ? t('defences.key', {
                  strategy: layers(`keyStrategies.${settings.keys.strategy}.name`).toLocaleLowerCase(locale),
                })
              : null}
          </li>
        ))}
      </ul>
      {faults.length > 0 ? (
        <ul className="defences faults-on" aria-label={t('defences.faultsLabel')}>
          {faults.map((fault) => (
            <li key={fault.key} className="fault">
              {t('defences.fault', { fault: layers(`faults.${fault.key}`, fault.values) })}
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}

/**
 * The action, or "no answer" when it never answered: its process died while it ran (the lab's crash fault kills
 * the app), and the page must say the card may have been charged beside the statement, not fall to the error
 * page. A response that came back with an error is still an error (error.tsx).
 */
async function payOrAnswerLost(previous: PayState, formData: FormData): Promise<PayState> {
  try {
    return await payOrder(previous, formData);
  } catch (error) {
    if (error instanceof TypeError) return { status: 'connection_lost' }; // fetch's "Failed to fetch"
    throw error;
  }
}
