// What the Chinese pages are checked for: the English words left in what a person sees. Technical text is
// exempt where it is marked as such (code, an element in lang="en", translate="no"), and so are the names in
// ALLOWED (products, protocols, SQL words, HTTP headers) that the article itself writes in Latin letters.
import type { Page } from '@playwright/test';

export const ALLOWED = new Set([
  // Products and protocols, as the article and the docs write them.
  'Redis',
  'PostgreSQL',
  'Lua',
  'Prisma',
  'Next',
  'js',
  'nginx',
  'Playwright',
  'Chromium',
  'Stripe',
  // The database failover's high-availability manager and proxy (docs/decisions/034).
  'Patroni',
  'HAProxy',
  // The HTTP clients of docs/clients.md, whose recipes the answer matrix runs.
  'undici',
  'RetryAgent',
  'got',
  'ky',
  'axios',
  'axios-retry',
  'fetch',
  'Node',
  'npm',
  'API',
  'HTTP',
  'JSON',
  'SQL',
  'URL',
  'ID',
  'id',
  'Token',
  'token',
  'hash',
  'IETF',
  'RFC',
  'OpenAPI',
  'Sentinel',
  'Redlock',
  'WAIT',
  'Lua',
  'CSP',
  'UI',
  'App',
  'ms',
  // The dollar sign Chinese writes for the checkout's USD amounts (US$42.00): a currency symbol, not a word.
  'US',
  // The problem types' pages: encodings and protocols, as Chinese technical writing spells them.
  'ASCII',
  'UTF',
  'KiB',
  'DNS',
  'cookie',
  'Accept',
  'Prefer',
  'Language',
  // SQL and the payment's states, as the code and the article write them.
  'UPDATE',
  'WHERE',
  'INSERT',
  'SET',
  'status',
  'PENDING',
  'PROCESSING',
  'PAID',
  'FAILED',
  'UNKNOWN',
  'PAYMENT',
  'RECEIPT',
  // A refund's states, its dedup rows and the ledger's constraint, as the code writes them.
  'REQUESTED',
  'SUCCEEDED',
  'REFUND',
  'CHECK',
  'idempotent_record',
  'request_id',
  // Headers and fields a program reads (a hyphenated name is one word to englishLeft).
  'Idempotency-Key',
  'Retry-After',
  'X-Client-Id',
  'Accept-Language',
  // Header names and the auth scheme, as the API's details write them.
  'Origin',
  'Host',
  'Bearer',
  'Idempotency',
  'Key',
  'Idempotency-Key',
  'Retry',
  'After',
  'Client',
  'Id',
  'X',
  'pay',
]);

/** The distinct English words in the page's visible text, outside code and marked English. */
export async function englishLeft(page: Page): Promise<string[]> {
  const words = await page.evaluate(() => {
    const exempt = 'code, pre, kbd, samp, script, style, noscript, [lang="en"], [translate="no"]';
    const found: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || parent.closest(exempt)) continue;
      const box = parent.getBoundingClientRect();
      const style = getComputedStyle(parent);
      if (box.width <= 1 || box.height <= 1 || style.visibility === 'hidden') continue; // not seen
      // Order and charge ids (ord_0a1b…, ch_9f3e…) are data, not words: taken out whole, digits and all.
      const text = (node.textContent ?? '').replace(/\b(?:ord|ch|pay|re|rq)_[0-9A-Za-z_-]+/g, ' ');
      for (const match of text.matchAll(/[A-Za-z][A-Za-z_]*(?:['’-][A-Za-z]+)*/g)) {
        found.push(match[0]);
      }
    }
    return found;
  });
  return [...new Set(words)].filter((word) => !ALLOWED.has(word) && word.length > 1);
}
