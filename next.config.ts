import type { NextConfig } from 'next';

const nextConfig: NextConfig = {
  // The demo runs offline and on loopback; nothing here reaches the internet.
  poweredByHeader: false,
  // Server actions accept small forms only; the payments API has its own limit (lib/http/body.ts).
  experimental: { serverActions: { bodySizeLimit: '16kb' } },
  // The Lua scripts are read from disk next to the modules that use them.
  outputFileTracingIncludes: { '/**': ['./lib/**/*.lua'] },
};

export default nextConfig;
