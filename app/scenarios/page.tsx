import type { Metadata } from 'next';
import { readLatestMatrix } from '@/lib/scenario-results';

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
          <div className="table-scroll">
            <table className="matrix">
              <caption className="visually-hidden">
                Charges and what the customer saw, per scenario and configuration
              </caption>
              <thead>
                <tr>
                  <th scope="col">Scenario</th>
                  {matrix.configurations.map((configuration) => (
                    <th scope="col" key={configuration.id}>
                      {configuration.title}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {matrix.scenarios.map((scenario) => (
                  <tr key={scenario.id}>
                    <th scope="row">
                      {scenario.title}
                      <span className="small muted block">source: {SOURCES[scenario.source] ?? scenario.source}</span>
                    </th>
                    {matrix.configurations.map((configuration) => {
                      const cell = matrix.cells.find(
                        (c) => c.scenario === scenario.id && c.configuration === configuration.id,
                      );
                      if (!cell) return <td key={configuration.id}>·</td>;
                      const charges = cell.actual.chargeCount;
                      return (
                        <td
                          key={configuration.id}
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
        </>
      )}
    </>
  );
}
