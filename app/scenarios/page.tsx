import type { Metadata } from 'next';
import Link from 'next/link';
import { rowCommand } from '@/e2e/scenarios/matrix';
import { exercisesOf } from '@/lib/lab/exercises';
import { type MatrixCell, readLatestMatrix } from '@/lib/scenario-results';
import styles from './scenarios.module.css';

export const metadata: Metadata = { title: 'Scenarios' };
export const dynamic = 'force-dynamic';

const SOURCES: Record<number, string> = {
  1: 'the person',
  2: 'the client’s network',
  3: 'infrastructure retries',
  4: 'failover',
};

export default async function ScenariosPage() {
  const matrix = await readLatestMatrix();
  return (
    <>
      <h1>Scenarios: which defence stops which duplicate</h1>
      <p>
        Every scenario reproduces one source of duplicate payments in a real browser (or a real HTTP client) and runs
        under each configuration of the defences. Each cell shows how many times the card network charged the order and
        what the customer saw. Run them with <code>npm run scenarios</code>.
      </p>
      {!matrix ? (
        <p className="muted">
          No scenario run yet. Run <code>npm run scenarios</code>, then reload this page.
        </p>
      ) : (
        <>
          <p className="small muted">
            {matrix.from === 'latest run'
              ? `Latest run: ${matrix.runAt ? new Date(matrix.runAt).toLocaleString('en-GB') : 'unknown date'}, ${matrix.durationSeconds ?? '?'} s, ${matrix.machine ?? ''}.`
              : 'From the results committed in docs/scenario-matrix.json (no local run yet).'}{' '}
            {matrix.cells.every((cell) => cell.pass)
              ? 'Every cell matched its declaration.'
              : `${matrix.cells.filter((cell) => !cell.pass).length} cell(s) differed from the declaration.`}
          </p>
          <Legend />
          <h2 id="proof-title">Which defence stops which duplicate</h2>
          <MatrixTable
            labelledBy="proof-title"
            className={styles.proof}
            caption="Charges and what the customer saw, per scenario and configuration"
            columns={matrix.configurations}
            rows={matrix.scenarios}
            cells={matrix.cells}
          />
          {matrix.keyStrategies ? (
            <>
              <h2 id="keys-title">Key strategies: what layer 2’s key is made of</h2>
              <p>
                The article’s first detail. Only layer 2 is on (and the pending UI off); each column is one way of
                making its key (the lab’s “Layer 2’s key”). A duplicate is stopped only when its retry carries the first
                request’s key.
              </p>
              <MatrixTable
                labelledBy="keys-title"
                className={styles.keys}
                caption="Charges and what the customer saw, per scenario and key strategy, with layer 2 alone"
                columns={matrix.keyStrategies.columns}
                rows={matrix.keyStrategies.rows.map((row) => ({ ...row, note: `Missed: ${row.why}` }))}
                cells={matrix.keyStrategies.cells}
              />
            </>
          ) : null}
        </>
      )}
    </>
  );
}

/** Every term a cell or a row shows, as the tables below show it. */
function Legend() {
  return (
    <section aria-labelledby="legend-title">
      <h2 id="legend-title">How to read the tables</h2>
      <p className="small muted">
        A cell is one run: a fresh order, the scenario played against it, then two counts. First what the card network
        recorded, then what the customer (or the calling service) was shown at the end.
      </p>
      <dl className={styles.legend}>
        <dt className={styles.once}>1 charge</dt>
        <dd>The card was charged once: the duplicate was stopped.</dd>
        <dt className={styles.more}>2 charges, 3, 20…</dt>
        <dd>The duplicate was charged too: every charge the card network recorded for the order.</dd>
        <dt>0 charges</dt>
        <dd>Nothing was charged.</dd>
        <dt>receipts</dt>
        <dd>
          In the queue’s row the count is of receipts sent to the customer, not charges: one payment, whose receipt
          message is delivered again.
        </dd>
        <dt>paid</dt>
        <dd>
          “Payment successful” (an API caller: a plain 201): the answer the customer ended with came from a request that
          charged the card itself. With 1 charge the duplicate never got that far (the pending UI kept it in the
          browser, say); with more, it charged too.
        </dd>
        <dt>first outcome</dt>
        <dd>
          The duplicate got the first request’s own answer: its charge, replayed (“Already paid”; an API caller gets the
          first response again, marked <code>Idempotent-Replayed: true</code>).
        </dd>
        <dt>already submitted</dt>
        <dd>
          The page’s one-time token was spent already: the duplicate was refused at once and sent nothing. It carries no
          result: the order’s status shows the first payment’s.
        </dd>
        <dt>in progress</dt>
        <dd>
          Told to wait; the first request is still running, the final outcome follows (an API caller: 409 with{' '}
          <code>Retry-After</code>).
        </dd>
        <dt>error</dt>
        <dd>An error page or an error status (the gateway’s 504, say): the customer cannot tell whether they paid.</dd>
        <dt>declared: …</dt>
        <dd>
          Outlined in red: the run differed from the cell declared in <code>e2e/scenarios/matrix.ts</code>, shown after
          “declared”.
        </dd>
        <dt>·</dt>
        <dd>The cell was not part of this run.</dd>
        <dt>source</dt>
        <dd>Where the duplicate comes from: the person, the client’s network, infrastructure retries, failover.</dd>
        <dt>
          <code>npm run scenarios -- -g "@…"</code>
        </dt>
        <dd>
          Runs that row again (every cell of it) and prints it. “Set up in the lab” opens the lab with the exercise’s
          settings, to play the row by hand.
        </dd>
      </dl>
    </section>
  );
}

type Row = { id: string; title: string; source: number; note?: string };

function MatrixTable(props: {
  labelledBy: string;
  className?: string;
  caption: string;
  columns: Array<{ id: string; title: string }>;
  rows: Row[];
  cells: MatrixCell[];
}) {
  return (
    // Its own scroller (a named section: role region), focusable so that keyboard users can scroll it too.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard (axe scrollable-region-focusable)
    <section className={styles.scroller} aria-labelledby={props.labelledBy} tabIndex={0}>
      <table className={`${styles.matrix} ${props.className ?? ''}`} aria-labelledby={props.labelledBy}>
        <caption className="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Scenario</th>
            {props.columns.map((column) => (
              <th scope="col" key={column.id}>
                {column.title}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr key={row.id}>
              <th scope="row">
                <span className={styles.scenario}>{row.title}</span>
                <span className={`${styles.meta} muted`}>source: {SOURCES[row.source] ?? row.source}</span>
                {row.note ? <span className={`${styles.meta} muted`}>{row.note}</span> : null}
                <code className={styles.command}>{rowCommand(row.id)}</code>
                <Exercises scenarioId={row.id} />
              </th>
              {props.columns.map((column) => {
                const cell = props.cells.find((c) => c.scenario === row.id && c.configuration === column.id);
                if (!cell) return <td key={column.id}>·</td>;
                const charges = cell.actual.chargeCount;
                const tone = charges > 1 ? styles.more : charges === 1 ? styles.once : '';
                return (
                  <td key={column.id} className={`${tone} ${cell.pass ? '' : styles.differs}`}>
                    <strong>
                      {charges} {cell.counts === 'receipts' ? 'receipt' : 'charge'}
                      {charges === 1 ? '' : 's'}
                    </strong>
                    <span className="block small">{cell.actual.sees}</span>
                    {cell.pass ? null : (
                      <span className="block small alarm">
                        declared: {cell.expected.charges}, {cell.expected.sees}
                      </span>
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The workshop's exercises this row belongs to, each a link that sets the lab up for it. */
function Exercises({ scenarioId }: { scenarioId: string }) {
  const exercises = exercisesOf(scenarioId);
  if (exercises.length === 0) return null;
  return (
    <span className={styles.meta}>
      Set up in the lab:{' '}
      {exercises.map((exercise, i) => (
        <span key={exercise.id}>
          {i > 0 ? ', ' : null}
          <Link href={`/lab?exercise=${exercise.id}`} prefetch={false}>
            Exercise {exercise.id}
          </Link>
        </span>
      ))}
    </span>
  );
}
