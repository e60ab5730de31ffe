import type { Metadata } from 'next';
import { cookies, headers } from 'next/headers';
import { notFound } from 'next/navigation';
import { env } from '@/lib/env';
import { isExposed, isPresenter } from '@/lib/http/presenter';
import { readRoom } from '@/lib/lab/room';
import { getLabSettings } from '@/lib/lab/settings-store';
import { readTimeline } from '@/lib/lab/timeline';
import { BANK_SETTLEMENT_WINDOW_MS, BANK_TIMEOUT_MS } from '@/lib/payments/bank';
import { LabConsole } from '../lab-console';
import { RefreshEvery } from './refresh';
import { PresenterSignIn } from './sign-in';

export const metadata: Metadata = { title: 'The room' };
export const dynamic = 'force-dynamic';

/**
 * The presenter's view of a workshop: how many attendees are active, every double charge and the switches
 * it happened under, everyone's lanes, and the global settings every new attendee starts from.
 */
export default async function RoomPage() {
  if (!env().LAB_ENABLED) notFound();
  const request = { headers: await headers(), cookies: await cookies() };
  if (!isPresenter(request)) {
    return (
      <>
        <h1>The room</h1>
        <p>
          This demo is open to a network: the room’s view and its global settings are the presenter’s.
          {env().LAB_SECRET ? '' : ' This server has no LAB_SECRET, so nobody can open it.'}
        </p>
        {env().LAB_SECRET ? <PresenterSignIn /> : null}
      </>
    );
  }
  const [room, settings, events] = await Promise.all([readRoom(), getLabSettings(), readTimeline(undefined, 200)]);
  return (
    <>
      <h1>The room</h1>
      <RefreshEvery ms={3_000} />
      <section className="card room-summary" aria-labelledby="room-title">
        <h2 id="room-title">Right now</h2>
        <dl className="facts">
          <dt>Attendees paying</dt>
          <dd data-testid="attendees">{room.attendees}</dd>
          <dt>Payment requests</dt>
          <dd>{room.requests}</dd>
          <dt>Orders charged more than once</dt>
          <dd data-testid="double-charges">{room.doubleCharges.length}</dd>
        </dl>
        {room.doubleCharges.length > 0 ? (
          <table className="matrix">
            <caption>Double charges, newest first, and the defences their requests ran with (0-5)</caption>
            <thead>
              <tr>
                <th scope="col">Order</th>
                <th scope="col">Charges</th>
                <th scope="col">Defences on</th>
              </tr>
            </thead>
            <tbody>
              {room.doubleCharges.slice(0, 20).map((order) => (
                <tr key={order.orderNo}>
                  <th scope="row" className="mono">
                    {order.orderNo}
                  </th>
                  <td>{order.charges}</td>
                  <td>{order.defences.join('; ') || 'unknown'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </section>
      <p>
        {isExposed() ? 'The demo is open to the network. ' : ''}The switches below are the <strong>global</strong>{' '}
        settings: every attendee starts from them until they change their own lab. The timeline shows everyone’s lanes.
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
