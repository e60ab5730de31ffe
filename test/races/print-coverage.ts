// What each race explorer file prints at its end: the coverage of its runs on the real code.
import { coverage } from './coverage.ts';

export function printCoverage(): void {
  const rows = [...coverage().entries()].sort(([a], [b]) => a.localeCompare(b));
  if (rows.length === 0) return;
  console.log('[races] coverage of the runs on the real code (schedules, ordered pairs of race points reached):');
  for (const [name, seen] of rows) {
    console.log(
      `[races]   ${name.padEnd(8)} ${String(seen.schedules).padStart(6)} schedules ${String(seen.pairs.size).padStart(5)} pairs`,
    );
  }
}
