import { env } from '../env.ts';
import { problem } from './problem.ts';

/** The lab's routes exist to teach; with LAB_ENABLED=false they do not exist at all. */
export function labDisabled(): Response | undefined {
  return env().LAB_ENABLED ? undefined : problem(404, 'not-found', 'Not found');
}
