// A statement as the hot path runs it (prepared, by its generic plan), run once and rolled back: EXPLAIN ANALYZE's
// lines, for the scale tests that hold a payment's statements to the rows they read.
import type pg from 'pg';

export async function explainByGenericPlan(
  db: pg.Client,
  statement: { text: string; values: unknown[] },
  options: { buffers?: boolean } = {},
): Promise<string[]> {
  await db.query('BEGIN');
  let prepared = false;
  try {
    await db.query('SET LOCAL plan_cache_mode = force_generic_plan');
    await db.query(`PREPARE explained AS ${statement.text}`);
    prepared = true;
    const args = statement.values.map((value) =>
      value === null || value === undefined ? 'NULL' : db.escapeLiteral(asText(value)),
    );
    const { rows } = await db.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, ${options.buffers ? 'BUFFERS, ' : ''}COSTS OFF) EXECUTE explained(${args.join(', ')})`,
    );
    return rows.map((row) => row['QUERY PLAN']);
  } finally {
    await db.query('ROLLBACK');
    // A prepared statement outlives its transaction.
    if (prepared) await db.query('DEALLOCATE explained');
  }
}

/** The lines of the scan of `table` under its update (`Update on <table>`), down to the next node. */
export function scanUnderUpdate(lines: string[], table: string): string {
  const update = lines.findIndex((line) => line.includes(`Update on ${table}`));
  const from = lines.findIndex((line, i) => i > update && new RegExp(` Scan .*on ${table}`).test(line));
  if (update === -1 || from === -1) throw new Error(`no scan of ${table} under its update:\n${lines.join('\n')}`);
  // A bitmap's index scan belongs to the scan above it.
  const to = lines.findIndex((line, i) => i > from && line.includes('->') && !line.includes('Bitmap Index Scan'));
  return lines.slice(from, to === -1 ? undefined : to).join('\n');
}

/** The sum of a number a plan's lines say, over every match (`Rows Removed by Filter: (\d+)`, say). */
export function sumOf(text: string, pattern: RegExp): number {
  return [...text.matchAll(pattern)].reduce((sum, match) => sum + Number(match[1]), 0);
}

/** A value as node-postgres sends it: a date as its moment, an array as PostgreSQL's literal. */
function asText(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return `{${value.map((item) => `"${String(item).replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
  return String(value);
}
