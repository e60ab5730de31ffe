// What the race explorer's runs on the real code reached, per configuration: how many schedules, and which
// ordered pairs of race points (one actor's step, then another actor's) some schedule took. Printed at the end
// of a races run beside the model's own counts.
import type { ServerLayers } from './world.ts';

type Seen = { schedules: number; pairs: Set<string> };
const BY_CONFIGURATION = new Map<string, Seen>();

/** Layers 2-5 as the model names a configuration: "2+3+4", "none". */
export function configurationName(layers: ServerLayers): string {
  const number = { requestKey: 2, stateMachine: 3, uniqueConstraint: 4, bankKey: 5 } as const;
  const on = (Object.keys(number) as Array<keyof typeof number>).filter((layer) => layers[layer]);
  return on.length === 0 ? 'none' : on.map((layer) => number[layer]).join('+');
}

/** One schedule's trace (`actor@point` per step, as RaceScheduler records it). */
export function recordCoverage(layers: ServerLayers, trace: readonly string[]): void {
  const name = configurationName(layers);
  const seen = BY_CONFIGURATION.get(name) ?? { schedules: 0, pairs: new Set<string>() };
  seen.schedules++;
  let last: { actor: string; point: string } | undefined;
  for (const entry of trace) {
    const at = entry.indexOf('@');
    if (at < 0) continue; // a crash (✝) or an event (!)
    const step = { actor: entry.slice(0, at), point: entry.slice(at + 1) };
    if (last && last.actor !== step.actor) seen.pairs.add(`${last.point} → ${step.point}`);
    last = step;
  }
  BY_CONFIGURATION.set(name, seen);
}

export function coverage(): Map<string, Seen> {
  return BY_CONFIGURATION;
}
