'use client';
// "Refund…" and "New refund": a form whose only field is the order. Its action opens a new draft (a new refund
// intent, a new request id) and goes to that draft's form. While it runs, the button says so and takes no second
// click: a second click would only open a second, unused draft.
import { useTranslations } from 'next-intl';
import { useFormStatus } from 'react-dom';
import { openRefund } from './actions';

export function OpenRefundForm({
  orderNo,
  label,
  secondary = false,
}: {
  orderNo: string;
  label: 'section.open' | 'form.new';
  secondary?: boolean;
}) {
  return (
    <form action={openRefund} className="open-refund">
      <input type="hidden" name="orderNo" value={orderNo} />
      <OpenButton label={label} secondary={secondary} />
    </form>
  );
}

function OpenButton({ label, secondary }: { label: 'section.open' | 'form.new'; secondary: boolean }) {
  const t = useTranslations('refunds');
  const { pending } = useFormStatus();
  return (
    <button
      type="submit"
      className={secondary ? 'button secondary' : 'button'}
      aria-disabled={pending}
      onClick={(event) => {
        if (pending) event.preventDefault();
      }}
    >
      {pending ? t('section.opening') : t(label)}
    </button>
  );
}
