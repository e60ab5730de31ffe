// Starts a worker thread of the exhaustive mode: TypeScript through tsx, as the main thread runs it.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
