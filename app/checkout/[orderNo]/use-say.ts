'use client';
// The checkout's messages in the reader's language: pay-state.ts says what to tell (keys and values), this
// puts it in words with next-intl.
import { useLocale, useTranslations } from 'next-intl';
import { inWords, type MessageRef } from './pay-state';

export function useSay(): (message: MessageRef) => string {
  const t = useTranslations('checkout');
  const locale = useLocale();
  return (message) => inWords(message, t, locale);
}
