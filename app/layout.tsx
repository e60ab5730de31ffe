import type { Metadata, Viewport } from 'next';
import Link from 'next/link';
import type { ReactNode } from 'react';
import './globals.css';

export const metadata: Metadata = {
  title: { default: 'Pay once', template: '%s · Pay once' },
  description: 'A checkout that cannot charge a card twice: five defences against duplicate payments.',
};

export const viewport: Viewport = { width: 'device-width', initialScale: 1 };

// Every page is rendered per request: it carries this response's script nonce (proxy.ts), and a page that
// sets a session cookie must never be one a cache keeps and hands to the next visitor.
export const dynamic = 'force-dynamic';

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <header className="site-header">
          <Link href="/" className="brand">
            Pay once
          </Link>
          <nav aria-label="Main">
            <Link href="/lab">Lab</Link>
            <Link href="/scenarios">Scenarios</Link>
            <Link href="/api/docs">API</Link>
          </nav>
        </header>
        <main>{children}</main>
      </body>
    </html>
  );
}
