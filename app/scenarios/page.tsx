import type { Metadata } from 'next';
import Link from 'next/link';
import { useLocale, useTranslations } from 'next-intl';
import { getLocale, getTranslations } from 'next-intl/server';
import type { ReactNode } from 'react';
import {
  CONFIGURATIONS,
  DUPLICATE_ANSWERS,
  KEY_STRATEGIES,
  RECIPE_BUDGET,
  REFUND_KEY_STRATEGIES,
  RELEASE_RULES,
  rowCommand,
  type Sees,
  SWITCHES,
} from '@/e2e/scenarios/matrix';
import { formatCents } from '@/lib/format';
import type { Locale } from '@/lib/i18n/locales';
import { exercisesOf } from '@/lib/lab/exercises';
import { type Matrix, type MatrixCell, readLatestMatrix } from '@/lib/scenario-results';
import styles from './scenarios.module.css';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations('scenarios'))('metaTitle') };
}
export const dynamic = 'force-dynamic';

// The matrix's data (e2e/.results/matrix.json, docs/scenario-matrix.json) stays English, as the reporter wrote
// it: every word the page shows from it is looked up by id in messages/<locale>/scenarios.json, the data's own
// text only where a message is missing (a scenario added to a run before its title was translated).

/** What a cell says the customer saw (the matrix's English), as the message that names it. */
const SEES_KEYS: Record<Sees, 'paid' | 'firstOutcome' | 'alreadySubmitted' | 'inProgress' | 'error'> = {
  paid: 'paid',
  'first outcome': 'firstOutcome',
  'already submitted': 'alreadySubmitted',
  'in progress': 'inProgress',
  error: 'error',
};

const code = (chunks: ReactNode) => <code>{chunks}</code>;

export default async function ScenariosPage() {
  const matrix = await readLatestMatrix();
  const t = await getTranslations('scenarios');
  const layers = await getTranslations('layers');
  const locale = await getLocale();

  /** A configuration's column: "All on", "2 Request key only" (the layer's step in the lab), from the layers it turns on. */
  const configurationTitle = (column: { id: string; title: string }): string => {
    const declared = CONFIGURATIONS.find((configuration) => configuration.id === column.id);
    if (!declared) return column.title;
    const on = SWITCHES.filter((layer) => declared.layers[layer]);
    if (on.length === SWITCHES.length) return t('configurations.allOn');
    if (on.length === 0) return t('configurations.allOff');
    const [only] = on;
    return on.length === 1 && only ? t('configurations.only', { step: layers(`steps.${only}`) }) : column.title;
  };
  return (
    <>
      <h1>{t('title')}</h1>
      <p>{t.rich('intro', { code })}</p>
      {!matrix ? (
        <p className="muted">{t.rich('noRun', { code })}</p>
      ) : (
        <>
          <p className="small muted">
            {matrix.from === 'latest run'
              ? t.rich('latestRun', {
                  date: matrix.runAt
                    ? new Date(matrix.runAt).toLocaleString(locale === 'en' ? 'en-GB' : locale)
                    : t('unknownDate'),
                  seconds: matrix.durationSeconds ?? '?',
                  machine: matrix.machine ?? '',
                  // The machine's description is data, in the reporter's English ("2 cores, Node v24, linux").
                  data: (chunks) => <span lang="en">{chunks}</span>,
                })
              : t.rich('fromDocs', { code })}{' '}
            {matrix.cells.every((cell) => cell.pass)
              ? t('allMatched')
              : t('differed', { count: matrix.cells.filter((cell) => !cell.pass).length })}
            {matrix.from === 'latest run' && matrix.freshCells !== undefined ? (
              <> {t('partialRun', { count: matrix.freshCells })}</>
            ) : null}
          </p>
          <Legend />
          <h2 id="proof-title">{t('proofTitle')}</h2>
          <MatrixTable
            labelledBy="proof-title"
            className={styles.proof}
            caption={t('proofCaption')}
            columns={matrix.configurations.map((column) => ({ ...column, title: configurationTitle(column) }))}
            rows={matrix.scenarios}
            cells={matrix.cells}
          />
          <DetailMatrices matrix={matrix} />
          {matrix.databaseFailover && matrix.databaseFailover.cells.length > 0 ? (
            <DetailTable
              part="failover"
              columns={matrix.databaseFailover.columns.map((column) => ({
                ...column,
                title: configurationTitle(column),
              }))}
              rows={matrix.databaseFailover.rows}
              cells={matrix.databaseFailover.cells}
            />
          ) : null}
        </>
      )}
    </>
  );
}

/** The details' own tables: the key strategies (the first detail) and the release rules (the third). */
function DetailMatrices({ matrix }: { matrix: Matrix }) {
  const t = useTranslations('scenarios');
  const layers = useTranslations('layers');
  const strategyTitle = (column: { id: string; title: string }): string =>
    (KEY_STRATEGIES as readonly string[]).includes(column.id)
      ? layers(`keyStrategies.${column.id as (typeof KEY_STRATEGIES)[number]}.name`)
      : column.title;
  const ruleTitle = (column: { id: string; title: string }): string =>
    (RELEASE_RULES as readonly string[]).includes(column.id)
      ? layers(`releaseRules.${column.id as (typeof RELEASE_RULES)[number]}.name`)
      : column.title;
  const answerTitle = (column: { id: string; title: string }): string =>
    (DUPLICATE_ANSWERS as readonly string[]).includes(column.id)
      ? layers(`duplicateAnswers.${column.id as (typeof DUPLICATE_ANSWERS)[number]}.name`)
      : column.title;
  const because = (row: { id: string; why: string }) => {
    const key = `releaseWhy.${row.id}` as 'releaseWhy.notify-fails';
    return t.rich('why', { why: () => (t.has(key) ? t(key) : row.why) });
  };
  const missed = (row: { id: string; why: string }) => {
    const key = `keyMisses.${row.id}` as 'keyMisses.double-click';
    return t.rich('missed', { why: () => (t.has(key) ? t.rich(key, { code }) : row.why) });
  };

  return (
    <>
      {matrix.keyStrategies ? (
        <DetailTable
          part="keys"
          columns={matrix.keyStrategies.columns.map((column) => ({ ...column, title: strategyTitle(column) }))}
          rows={matrix.keyStrategies.rows.map((row) => ({ ...row, note: missed(row) }))}
          cells={matrix.keyStrategies.cells}
        />
      ) : null}
      {matrix.releaseRules ? (
        <DetailTable
          part="release"
          columns={matrix.releaseRules.columns.map((column) => ({ ...column, title: ruleTitle(column) }))}
          rows={matrix.releaseRules.rows.map((row) => ({ ...row, note: because(row) }))}
          cells={matrix.releaseRules.cells}
        />
      ) : null}
      {matrix.duplicateAnswers ? (
        <DetailTable
          part="answers"
          columns={matrix.duplicateAnswers.columns.map((column) => ({ ...column, title: answerTitle(column) }))}
          rows={matrix.duplicateAnswers.rows}
          cells={matrix.duplicateAnswers.cells}
        />
      ) : null}
      <RefundMatrix matrix={matrix} />
    </>
  );
}

/** The refund-key table (the first detail's second half): a refund's identity, three ways. */
function RefundMatrix({ matrix }: { matrix: Matrix }) {
  const t = useTranslations('scenarios');
  const layers = useTranslations('layers');
  if (!matrix.refundKeys) return null;
  const strategyTitle = (column: { id: string; title: string }): string =>
    (REFUND_KEY_STRATEGIES as readonly string[]).includes(column.id)
      ? layers(`refundKeyStrategies.${column.id as (typeof REFUND_KEY_STRATEGIES)[number]}.name`)
      : column.title;
  const because = (row: { id: string; why: string }) => {
    const key = `refundWhy.${row.id}` as 'refundWhy.refund-double-click';
    return t.rich('why', { why: () => (t.has(key) ? t(key) : row.why) });
  };
  return (
    <DetailTable
      part="refunds"
      columns={matrix.refundKeys.columns.map((column) => ({ ...column, title: strategyTitle(column) }))}
      rows={matrix.refundKeys.rows.map((row) => ({ ...row, note: because(row) }))}
      cells={matrix.refundKeys.cells}
    />
  );
}

/** One detail's table under its heading and introduction (scenarios.<part>Title, <part>Intro, <part>Caption). */
function DetailTable(props: {
  part: 'keys' | 'release' | 'answers' | 'refunds' | 'failover';
  columns: Array<{ id: string; title: string }>;
  rows: Row[];
  cells: MatrixCell[];
}) {
  const t = useTranslations('scenarios');
  const { part } = props;
  return (
    <>
      <h2 id={`${part}-title`}>{t(`${part}Title`)}</h2>
      <p>{t(`${part}Intro`)}</p>
      <MatrixTable
        labelledBy={`${part}-title`}
        className={styles.keys}
        caption={t(`${part}Caption`)}
        columns={props.columns}
        rows={props.rows}
        cells={props.cells}
      />
    </>
  );
}

/** Every term a cell or a row shows, as the tables below show it. */
function Legend() {
  const t = useTranslations('scenarios');
  return (
    <section aria-labelledby="legend-title">
      <h2 id="legend-title">{t('legend.title')}</h2>
      <p className="small muted">{t('legend.intro')}</p>
      <dl className={styles.legend}>
        <dt className={styles.once}>{t('legend.once')}</dt>
        <dd>{t('legend.onceMeans')}</dd>
        <dt className={styles.more}>{t('legend.more')}</dt>
        <dd>{t('legend.moreMeans')}</dd>
        <dt>{t('legend.none')}</dt>
        <dd>{t('legend.noneMeans')}</dd>
        <dt>{t('legend.receipts')}</dt>
        <dd>{t('legend.receiptsMeans')}</dd>
        <dt>{t('sees.paid')}</dt>
        <dd>{t('legend.paidMeans')}</dd>
        <dt>{t('sees.firstOutcome')}</dt>
        <dd>{t.rich('legend.firstOutcomeMeans', { code })}</dd>
        <dt>{t('sees.alreadySubmitted')}</dt>
        <dd>{t('legend.alreadySubmittedMeans')}</dd>
        <dt>{t('sees.inProgress')}</dt>
        <dd>{t.rich('legend.inProgressMeans', { code })}</dd>
        <dt>{t('sees.error')}</dt>
        <dd>{t('legend.errorMeans')}</dd>
        <dt>{t('sees.refusedThen', { sees: t('sees.paid') })}</dt>
        <dd>{t('legend.refusedThenPaidMeans')}</dd>
        <dt>{t('sees.refusedThen', { sees: t('sees.firstOutcome') })}</dt>
        <dd>{t('legend.refusedThenFirstMeans')}</dd>
        <dt>{t('sees.learned')}</dt>
        <dd>{t('legend.learnedMeans')}</dd>
        <dt>{t('sees.gaveUp', { requests: RECIPE_BUDGET })}</dt>
        <dd>{t('legend.gaveUpMeans')}</dd>
        <dt>{t('refunds', { count: 1 })}</dt>
        <dd>{t('legend.refundsMeans')}</dd>
        <dt>{t('sees.refundedAsOwed', { amount: '$…' })}</dt>
        <dd>{t('legend.refundedAsOwedMeans')}</dd>
        <dt>{t('sees.refundedOwed', { amount: '$…', owed: '$…' })}</dt>
        <dd>{t('legend.refundedOwedMeans')}</dd>
        <dt>{t('legend.declared')}</dt>
        <dd>{t.rich('legend.declaredMeans', { code })}</dd>
        <dt>{t('notRun')}</dt>
        <dd>{t('legend.notRunMeans')}</dd>
        <dt>{t('legend.source')}</dt>
        <dd>{t('legend.sourceMeans')}</dd>
        <dt>
          <code>npm run scenarios -- -g "@…"</code>
        </dt>
        <dd>{t('legend.commandMeans')}</dd>
      </dl>
    </section>
  );
}

type Row = { id: string; title: string; source?: number; note?: ReactNode };

function MatrixTable(props: {
  labelledBy: string;
  className?: string;
  caption: string;
  columns: Array<{ id: string; title: string }>;
  rows: Row[];
  cells: MatrixCell[];
}) {
  const t = useTranslations('scenarios');
  const titleOf = (row: Row) => {
    const key = `titles.${row.id}` as 'titles.double-click';
    return t.has(key) ? t(key) : row.title;
  };
  const sourceOf = (row: Row) => {
    const key = `sources.${row.source}` as 'sources.1';
    return t.has(key) ? t(key) : String(row.source);
  };
  return (
    // Its own scroller (a named section: role region), focusable so that keyboard users can scroll it too.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard (axe scrollable-region-focusable)
    <section className={styles.scroller} aria-labelledby={props.labelledBy} tabIndex={0}>
      <table className={`${styles.matrix} ${props.className ?? ''}`} aria-labelledby={props.labelledBy}>
        <caption className="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">{t('scenarioColumn')}</th>
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
                <span className={styles.scenario}>{titleOf(row)}</span>
                {row.source === undefined ? null : (
                  <span className={`${styles.meta} muted`}>{t('source', { source: sourceOf(row) })}</span>
                )}
                {row.note ? <span className={`${styles.meta} muted`}>{row.note}</span> : null}
                <code className={styles.command}>{rowCommand(row.id)}</code>
                <Exercises scenarioId={row.id} />
              </th>
              {props.columns.map((column) => (
                <CellView
                  key={column.id}
                  cell={props.cells.find((c) => c.scenario === row.id && c.configuration === column.id)}
                />
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** One cell: the charges, what the customer saw, the requests it cost (the answer matrix), and what was declared. */
function CellView({ cell }: { cell: MatrixCell | undefined }) {
  const t = useTranslations('scenarios');
  const locale = useLocale() as Locale;
  const seesOf = (sees: string): string => {
    // The refund-key matrix's "got 500 cents back, as owed" (or "owed 1000 cents").
    const refunded = sees.match(/^got (\d+) cents back, (?:as owed|owed (\d+) cents)$/);
    if (refunded?.[1]) {
      const amount = formatCents(Number(refunded[1]), locale);
      return refunded[2]
        ? t('sees.refundedOwed', { amount, owed: formatCents(Number(refunded[2]), locale) })
        : t('sees.refundedAsOwed', { amount });
    }
    // The release-rule matrix's "in progress, then paid": told to wait before its final answer.
    const then = sees.match(/^in progress, then (.+)$/);
    if (then?.[1]) return t('sees.refusedThen', { sees: seesOf(then[1]) });
    // The answer matrix's clients: they learned their charge, or gave up after their budget of requests.
    if (sees === 'learned the charge') return t('sees.learned');
    const gaveUp = sees.match(/^gave up after (\d+) requests$/);
    if (gaveUp?.[1]) return t('sees.gaveUp', { requests: Number(gaveUp[1]) });
    const key = SEES_KEYS[sees as Sees];
    return key ? t(`sees.${key}`) : sees;
  };
  const chargesOf = (charges: string) => {
    const key = `declaredCharges.${charges}` as 'declaredCharges.more';
    return t.has(key) ? t(key) : charges;
  };
  if (!cell) return <td>{t('notRun')}</td>;
  const charges = cell.actual.chargeCount;
  // A refund cell is wrong when the customer got back other than they are owed (two refunds may be right).
  const wrong = cell.counts === 'refunds' ? !cell.actual.sees.endsWith('as owed') : charges > 1;
  const tone = wrong ? styles.more : charges >= 1 ? styles.once : '';
  return (
    <td className={`${tone} ${cell.pass ? '' : styles.differs}`}>
      <strong>{t(cell.counts ?? 'charges', { count: charges })}</strong>
      <span className="block small">{seesOf(cell.actual.sees)}</span>
      {cell.actual.requests === undefined ? null : (
        <span className="block small muted">{t('requests', { count: cell.actual.requests })}</span>
      )}
      {cell.fresh ? <span className={`block small ${styles.fresh}`}>{t('fresh')}</span> : null}
      {cell.pass ? null : (
        <span className="block small alarm">
          {t('declared', { charges: chargesOf(cell.expected.charges), sees: seesOf(cell.expected.sees) })}
        </span>
      )}
    </td>
  );
}

/** The workshop's exercises this row belongs to, each a link that sets the lab up for it. */
function Exercises({ scenarioId }: { scenarioId: string }) {
  const t = useTranslations('scenarios');
  const exercises = exercisesOf(scenarioId);
  if (exercises.length === 0) return null;
  return (
    <span className={styles.meta}>
      {t('setUp')}{' '}
      {exercises.map((exercise, i) => (
        <span key={exercise.id}>
          {i > 0 ? t('listSeparator') : null}
          <Link href={`/lab?exercise=${exercise.id}`} prefetch={false}>
            {t('exercise', { id: exercise.id })}
          </Link>
        </span>
      ))}
    </span>
  );
}
