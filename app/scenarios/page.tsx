import type { Metadata } from 'next';
import { type MatrixCell, readLatestMatrix } from '@/lib/scenario-results';

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
          <h2 id="proof-title">Which defence stops which duplicate</h2>
          <MatrixTable
            labelledBy="proof-title"
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

type Row = { id: string; title: string; source: number; note?: string };

function MatrixTable(props: {
  labelledBy: string;
  caption: string;
  columns: Array<{ id: string; title: string }>;
  rows: Row[];
  cells: MatrixCell[];
}) {
  return (
    <div className="table-scroll">
      <table className="matrix" aria-labelledby={props.labelledBy}>
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
                {row.title}
                <span className="small muted block">source: {SOURCES[row.source] ?? row.source}</span>
                {row.note ? <span className="small muted block">{row.note}</span> : null}
              </th>
              {props.columns.map((column) => {
                const cell = props.cells.find((c) => c.scenario === row.id && c.configuration === column.id);
                if (!cell) return <td key={column.id}>·</td>;
                const charges = cell.actual.chargeCount;
                return (
                  <td
                    key={column.id}
                    className={`${charges > 1 ? 'cell-double' : charges === 1 ? 'cell-once' : 'cell-none'} ${cell.pass ? '' : 'cell-differs'}`}
                  >
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
    </div>
  );
}
