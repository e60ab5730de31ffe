// Zod compiles object parsers with `new Function` where it may, and probes for it on first use. The pages'
// Content-Security-Policy forbids eval (proxy.ts), so in the browser the probe is refused and reported as a
// violation. A client component that loads zod imports this first: it parses without compiling, and never
// probes. The server keeps the compiled parsers.
import { z } from 'zod';

if (typeof window !== 'undefined') z.config({ jitless: true });
