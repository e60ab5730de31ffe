import type { NextConfig } from 'next';
import createNextIntlPlugin from 'next-intl/plugin';
import { NO_CONTENT_SECURITY_POLICY } from './lib/http/edge.ts';

// English and Chinese (lib/i18n): the language of each render, and its messages.
const withNextIntl = createNextIntlPlugin('./lib/i18n/request.ts');

const nextConfig: NextConfig = {
  // The demo runs offline and on loopback; nothing here reaches the internet.
  poweredByHeader: false,
  experimental: {
    // Server actions accept small forms only; the payments API has its own limit (lib/http/body.ts).
    serverActions: { bodySizeLimit: '16kb' },
    // What Next.js buffers of a body for proxy.ts, which refuses anything over 16 KiB: a 10 MB post to a page
    // is held to this much (the default is 10 MB). Over 16 KiB by more than one socket read (64 KiB), so that
    // the copy of a body that is over the limit is always over it too (the read that crosses is dropped).
    proxyClientMaxBodySize: 128 * 1024,
  },
  // `npm test` type-checks the whole project first (tsc, strict); the build does not check it a second time
  // (10 s of every build, and of every clean-clone run).
  typescript: { ignoreBuildErrors: true },
  // The Lua scripts are read from disk next to the modules that use them.
  outputFileTracingIncludes: { '/**': ['./lib/**/*.lua'] },
  // On every answer: pages, the API, the proxy's refusals. Pages get their Content-Security-Policy (with a
  // nonce) from proxy.ts; everything else under /api gets one that allows nothing.
  async headers() {
    return [
      {
        source: '/:path*',
        headers: [
          { key: 'X-Content-Type-Options', value: 'nosniff' },
          { key: 'Referrer-Policy', value: 'no-referrer' },
          { key: 'X-Frame-Options', value: 'DENY' },
        ],
      },
      {
        source: '/api/:path((?!docs$).*)',
        headers: [{ key: 'Content-Security-Policy', value: NO_CONTENT_SECURITY_POLICY }],
      },
    ];
  },
};

export default withNextIntl(nextConfig);
