// The presenter's room against the real PostgreSQL and Redis: a double charge stays listed however much the
// room's timeline is written to since.
import { describe, expect, it } from 'vitest';
import { clickOf } from '../../test/timeline.ts';
import { getDb } from '../db.ts';
import { createOrder } from '../payments/orders.ts';
import { readRoom } from './room.ts';
import { ALL_LAYERS_OFF } from './settings.ts';
import { publishTimelineEvent } from './timeline.ts';

describe('the room', () => {
  it('lists an order the bank charged twice after 1,100 other entries on the timeline', async () => {
    // Charged twice at the bank, as with every defence off (the bank's rows written directly).
    const { orderNo } = await createOrder({ lab: { layers: ALL_LAYERS_OFF } });
    await getDb().bankCharge.createMany({
      data: [1, 2].map((n) => ({ id: `ch_room_${n}_${orderNo}`, merchantRef: orderNo, amountCents: 4_200 })),
    });
    for (let i = 0; i < 1_100; i += 1) {
      await publishTimelineEvent(clickOf('noisy', `NOISE-${i}`));
    }
    const room = await readRoom();
    expect(room.doubleCharges.find((order) => order.orderNo === orderNo)).toMatchObject({ charges: 2, defences: [] });
  });
});
