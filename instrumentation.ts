// Next.js calls register() once when a server instance starts.
export async function register(): Promise<void> {
  // NEXT_RUNTIME is Next's own flag (not configuration): the reconciler needs Node, not the edge runtime.
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  const { env } = await import('./lib/env');
  env(); // an invalid configuration stops the server here, naming the variable
  const { startReconciler } = await import('./lib/payments/reconciler-loop');
  startReconciler();
}
