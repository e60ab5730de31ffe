// Typed messages: a key that English does not have fails to compile.
import type { Locale } from './locales.ts';
import type { Messages } from './messages.ts';

declare module 'next-intl' {
  interface AppConfig {
    Locale: Locale;
    Messages: Messages;
  }
}
