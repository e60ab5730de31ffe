// A statement composed once (composeOnce, composeEach): its text, its parameters' numbers, and what a run binds.
import { describe, expect, it } from 'vitest';
import { composeEach, composeOnce, type Slots } from './db.ts';
import { Prisma } from './generated/prisma/client.ts';

type Values = { orderNo: string; attemptId: string; fence?: number };

describe('composeOnce', () => {
  it('numbers each named value once, wherever the text uses it, and each constant apart', () => {
    const statement = composeOnce<Values>(
      ({ orderNo, attemptId }) => Prisma.sql`UPDATE orders SET attempt_id = ${attemptId}, status = ${'PROCESSING'}
        WHERE order_no = ${orderNo} AND status = ${'PENDING'} AND ${orderNo} <> ${attemptId}`,
    );
    expect(statement.text).toBe(`UPDATE orders SET attempt_id = $1, status = $2
        WHERE order_no = $3 AND status = $4 AND $3 <> $1`);
    expect(statement.bind({ orderNo: 'ord_1', attemptId: 'att_1' })).toEqual([
      'att_1',
      'PROCESSING',
      'ord_1',
      'PENDING',
    ]);
    // Each run binds its own values, in a fresh list.
    const first = statement.bind({ orderNo: 'ord_2', attemptId: 'att_2' });
    expect(first).toEqual(['att_2', 'PROCESSING', 'ord_2', 'PENDING']);
    expect(statement.bind({ orderNo: 'ord_2', attemptId: 'att_2' })).not.toBe(first);
  });

  it('binds only the values its text names (an optional one left out of this shape is not sent)', () => {
    const statement = composeOnce<Values>(({ orderNo }) => Prisma.sql`SELECT ${orderNo}::text ${Prisma.empty}`);
    expect(statement.text).toBe('SELECT $1::text ');
    expect(statement.bind({ orderNo: 'ord_1', attemptId: 'att_1', fence: 3 })).toEqual(['ord_1']);
  });
});

describe('composeEach', () => {
  it('composes each shape once, the first time it is asked for, and gives it a name of its own', () => {
    let composed = 0;
    const statementOf = composeEach(
      (held: boolean) => String(held),
      (held: boolean, { orderNo, fence }: Slots<{ orderNo: string; fence: number }>) => {
        composed++;
        return held
          ? Prisma.sql`SELECT 1 WHERE ${orderNo}::text IS NOT NULL AND ${fence}::int > 0`
          : Prisma.sql`SELECT 2 WHERE ${orderNo}::text IS NOT NULL`;
      },
    );
    const held = statementOf(true);
    expect(statementOf(true)).toBe(held);
    const free = statementOf(false);
    expect(composed).toBe(2);
    expect(free.text).toBe('SELECT 2 WHERE $1::text IS NOT NULL');
    expect(held.name).not.toBe(free.name);
  });
});
