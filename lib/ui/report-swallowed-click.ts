// Layer 0 on the lab's timeline: the checkout page calls this when its pending UI swallows a click (a second
// click, or Enter, while a payment is in flight), so the lab can draw what never became a request. Fire and
// forget: `keepalive` lets the report outlive a page that is being left, and a failed report changes nothing
// for the customer, so every error is ignored. Browser-only.
export function reportSwallowedClick(orderNo: string): void {
  try {
    fetch('/api/lab/timeline', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orderNo, event: 'click-swallowed' }),
      keepalive: true,
      credentials: 'same-origin',
    }).catch(() => {});
  } catch {
    // fetch itself may throw (no fetch, a page being torn down): the report is only ever a nicety.
  }
}
