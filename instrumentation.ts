// Next.js calls register() once when a server instance starts.
export async function register(): Promise<void> {
  // NEXT_RUNTIME is Next's own flag (not configuration): the reconciler needs Node, not the edge runtime.
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  // Each request's peer address, and TRACE and TRACK, which Next.js answers with a bare 500 before anything of
  // ours runs (lib/http/node-server.ts).
  const { guardNodeServer } = await import('./lib/http/node-server');
  guardNodeServer();
  const { env } = await import('./lib/env');
  const config = env(); // an invalid configuration stops the server here, naming the variable
  const { sessionSecret } = await import('./lib/session-secret');
  sessionSecret(); // without SESSION_SECRET: this process's own key, made now and announced once
  // The lab (its policy for payments, its timeline from their spans) and the OTLP exporter, when configured.
  const { registerLab } = await import('./lib/lab/register');
  registerLab();
  // The reconciler and retention, unless another instance runs them (BACKGROUND_JOBS=false).
  if (!config.BACKGROUND_JOBS) return;
  const { startReconciler } = await import('./lib/payments/reconciler-loop');
  startReconciler();
}
