'use client';

/**
 * Tells the lab's timeline that the pending UI (layer 0) swallowed a click on this order's Pay button: no
 * request left the page, so without this the lab would show nothing at all. Fire and forget.
 */
export function reportSwallowedClick(orderNo: string): void {
  void fetch('/api/lab/timeline', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ orderNo, event: 'click-swallowed' }),
    keepalive: true,
  }).catch(() => {});
}
