import type { Metadata } from 'next';
import { cookies, headers } from 'next/headers';
import { notFound } from 'next/navigation';
import { getTranslations } from 'next-intl/server';
import { WorkshopNav } from '@/app/workshop/workshop-document';
import { env } from '@/lib/env';
import { redisMemory, stateOf } from '@/lib/health';
import { isExposed } from '@/lib/http/presenter';
import { isPresenter } from '@/lib/http/presenter-session';
import { findExercise } from '@/lib/lab/exercises';
import { readRoom } from '@/lib/lab/room';
import {
  type AttendeeProgress,
  type RoomExercise,
  readProgress,
  roomExercise,
  roomSince,
} from '@/lib/lab/room-steering';
import { getLabSettings } from '@/lib/lab/settings-store';
import { readTimeline } from '@/lib/lab/timeline';
import { BANK_SETTLEMENT_WINDOW_MS, BANK_TIMEOUT_MS } from '@/lib/payments/bank';
import { LabConsole } from '../lab-console';
import { signOutPresenter } from './actions';
import { RefreshEvery } from './refresh';
import { PresenterSignIn } from './sign-in';
import { RoomSteering } from './steering';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations('lab.room'))('title') };
}
export const dynamic = 'force-dynamic';

/**
 * The presenter's view of a workshop: how many attendees are active, every double charge and the switches
 * it happened under, everyone's lanes, and the global settings every new attendee starts from.
 */
export default async function RoomPage() {
  if (!env().LAB_ENABLED) notFound();
  const t = await getTranslations('lab.room');
  const request = { headers: await headers(), cookies: await cookies() };
  if (!(await isPresenter(request))) {
    return (
      <>
        <h1>{t('title')}</h1>
        <p>
          {t('presenterOnly')}
          {env().LAB_SECRET ? null : <> {t.rich('noSecret', { code: (chunks) => <code>{chunks}</code> })}</>}
        </p>
        {env().LAB_SECRET ? <PresenterSignIn /> : null}
      </>
    );
  }
  const [room, settings, events, memory, exercise, since] = await Promise.all([
    readRoom(),
    getLabSettings(),
    readTimeline(undefined, 200),
    redisMemory(),
    roomExercise(),
    roomSince(),
  ]);
  const progress = await readProgress(findExercise(exercise?.id ?? ''), Math.max(since, exercise?.at ?? 0));
  const fullness = stateOf(memory);
  return (
    <>
      <h1>{t('title')}</h1>
      <WorkshopNav />
      <RefreshEvery ms={3_000} />
      <RoomSteering current={exercise?.id} />
      <Progress rows={progress} exercise={exercise} />
      <section className="card room-summary" aria-labelledby="room-title">
        <h2 id="room-title">{t('rightNow')}</h2>
        <dl className="facts">
          <dt>{t('attendees')}</dt>
          <dd data-testid="attendees">{room.attendees}</dd>
          <dt>{t('requests')}</dt>
          <dd>{room.requests}</dd>
          <dt>{t('doubleCharged')}</dt>
          <dd data-testid="double-charges">{room.doubleCharges.length}</dd>
          {memory.maxBytes > 0 ? (
            <>
              <dt>{t('redisMemory')}</dt>
              <dd data-testid="redis-memory">
                {t('redisMemoryOf', { used: megabytes(memory.usedBytes), max: megabytes(memory.maxBytes) })}
              </dd>
            </>
          ) : null}
        </dl>
        <RedisFullness fullness={fullness} />
        <DoubleCharges orders={room.doubleCharges} />
      </section>
      {isExposed() ? (
        <form action={signOutPresenter} className="row">
          <span className="small">{t('signedIn')}</span>
          <button type="submit" className="button secondary">
            {t('signOut')}
          </button>
        </form>
      ) : null}
      <p>
        {isExposed() ? `${t('exposed')} ` : ''}
        {t.rich('global', { strong: (chunks) => <strong>{chunks}</strong> })}
      </p>
      <LabConsole
        scope="room"
        initialSettings={settings}
        initialEvents={events}
        bankTimeoutMs={BANK_TIMEOUT_MS}
        settlementWindowMs={BANK_SETTLEMENT_WINDOW_MS}
      />
    </>
  );
}

/** Who has seen the lesson of the room's exercise: a double charge, the fix switched on, then one charge. */
async function Progress({ rows, exercise }: { rows: AttendeeProgress[]; exercise?: RoomExercise }) {
  const t = await getTranslations('lab.room');
  const on = exercise ? (
    <p data-testid="room-exercise">
      {t('onExercise', { id: exercise.id, at: new Date(exercise.at).toISOString().slice(11, 19) })}
    </p>
  ) : null;
  if (rows.length === 0) return on;
  const said = (value: boolean | undefined) => (value === undefined ? t('noFix') : value ? t('yes') : t('no'));
  return (
    <>
      {on}
      <table className="matrix" data-testid="room-progress">
        <caption>
          {t('progressTitle')}. <span className="small muted">{t('progressCaption')}</span>
        </caption>
        <thead>
          <tr>
            <th scope="col">{t('attendee')}</th>
            <th scope="col">{t('sawDoubleCharge')}</th>
            <th scope="col">{t('fixedIt')}</th>
            <th scope="col">{t('paidOnce')}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => (
            <tr key={row.attendee} data-attendee={row.attendee}>
              <th scope="row">{index + 1}</th>
              <td>{said(row.sawDoubleCharge)}</td>
              <td>{said(row.fixedIt)}</td>
              <td>{said(row.paidOnce)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** Redis near or at its maxmemory: new orders and payments are about to be, or are, refused. */
async function RedisFullness({ fullness }: { fullness: ReturnType<typeof stateOf> }) {
  if (fullness === 'ok') return null;
  const t = await getTranslations('lab.room');
  return (
    <p role="alert" className="alarm" data-testid="redis-full">
      {t.rich(fullness === 'full' ? 'redisFull' : 'redisNearFull', { code: (chunks) => <code>{chunks}</code> })}
    </p>
  );
}

/** The orders charged more than once, the newest 20, with the defences their requests ran with. */
async function DoubleCharges({ orders }: { orders: Awaited<ReturnType<typeof readRoom>>['doubleCharges'] }) {
  if (orders.length === 0) return null;
  const t = await getTranslations('lab.room');
  const none = (await getTranslations('lab.console'))('none');
  return (
    <table className="matrix">
      <caption>{t('doubleCharges')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('order')}</th>
          <th scope="col">{t('charges')}</th>
          <th scope="col">{t('defencesOn')}</th>
        </tr>
      </thead>
      <tbody>
        {orders.slice(0, 20).map((order) => (
          <tr key={order.orderNo}>
            <th scope="row" className="mono" translate="no">
              {order.orderNo}
            </th>
            <td>{order.charges}</td>
            <td>
              {order.defences.map((on) => (on === 'none' ? none : on)).join(t('defencesSeparator')) || t('unknown')}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Bytes as the room reads them: megabytes, one decimal (the unit is the message's). */
function megabytes(bytes: number): string {
  return (bytes / 1_048_576).toFixed(1);
}
