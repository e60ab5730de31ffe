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
  'idempotent_record',
  'request_id',
  // Headers and fields a program reads.
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
      for (const match of (node.textContent ?? '').matchAll(/[A-Za-z][A-Za-z_]*(?:['’-][A-Za-z]+)*/g)) {
        found.push(match[0]);
      }
    }
    return found;
  });
  // Order and charge ids (ord_…, ch_…) are data, not words.
  return [...new Set(words)].filter((word) => !ALLOWED.has(word) && !/^(ord|ch|pay)_/.test(word) && word.length > 1);
}
