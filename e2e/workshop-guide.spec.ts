// The workshop guide's exercise 7, run as printed (docs/workshop.md, the block tagged exercise-7) against
// the test server, and held to what the guide says it prints. Exercise 10's block needs the cluster and
// runs with the cluster's scenarios (e2e/scenarios/cluster.spec.ts).
import { expect, test } from './fixtures';
import { guideBlock, runGuideBlock, runsOf } from './guide';

test('@guide exercise 7: a client that gives up after 0.5 s and retries, with every layer on and with layers 2-5 off', async ({
  baseURL,
  page,
}) => {
  const me = `attendee-${test.info().workerIndex}-${Date.now().toString(36)}`;
  const output = await runGuideBlock(guideBlock('exercise-7'), baseURL ?? '', 60_000, me);
  const [allOn = '', serverLayersOff = ''] = runsOf(output);
  // Every layer on: the first attempt is not answered in time; later ones are told to wait, or get its answer.
  const attempts = attemptsOf(allOn);
  expect(attempts).toHaveLength(4);
  expect(attempts[0]).toBe('attempt 1: no answer within 0.5 s, retrying');
  const answered = attempts.filter((attempt) => attempt.startsWith('HTTP/'));
  expect(answered.length).toBeGreaterThan(0);
  for (const answer of answered) {
    expect(answer).toMatch(
      /^HTTP\/1\.1 409 [\s\S]*^retry-after: 1$|^HTTP\/1\.1 201 [\s\S]*^idempotent-replayed: true$/im,
    );
  }
  // The second arrives while the first is at the bank (1.5 s), and is told to wait; but a machine busy enough may
  // leave it unanswered within the client's 0.5 s, or send it after the first has finished (beside a second test
  // run it got the 201 replay). What holds whatever the timing: "in progress" never after the first's outcome.
  const statuses = answered.map((answer) => answer.slice('HTTP/1.1 '.length, 'HTTP/1.1 '.length + 3));
  const firstReplay = statuses.indexOf('201');
  if (firstReplay >= 0) expect(statuses.slice(firstReplay)).not.toContain('409');
  expect(allOn).toMatch(/^1 charge\(s\)$/m);
  // Layers 2-5 off: nothing is answered within 0.5 s, and every attempt charged.
  expect(serverLayersOff.match(/no answer within 0\.5 s/g)).toHaveLength(4);
  expect(serverLayersOff).not.toMatch(/^HTTP/m);
  expect(serverLayersOff).toMatch(/^4 charge\(s\)$/m);
  // Where the guide says the commands' lanes are: the lab at ?client=$ME, the two orders' eight attempts at
  // least (their receipts' lanes too); in this browser's own lab, none of them.
  await page.goto(`/lab?client=${me}`);
  await expect(page.getByTestId('timeline-client')).toContainText(me);
  const lanes = page.locator('li.lane[data-request-id]');
  await expect.poll(() => lanes.count()).toBeGreaterThanOrEqual(8);
  const orders = await lanes.evaluateAll((items) => [...new Set(items.map((item) => item.dataset.orderNo ?? ''))]);
  expect(orders).toHaveLength(2);
  await page.goto('/lab');
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  for (const orderNo of orders) await expect(page.locator(`li.lane[data-order-no="${orderNo}"]`)).toHaveCount(0);
});

/** A run's attempts in order, each as it printed: "attempt N: no answer …", or its status line and headers. */
function attemptsOf(run: string): string[] {
  return run
    .replace(/\r/g, '')
    .split(/\n(?=HTTP\/|attempt \d+:|\d+ charge)/)
    .map((attempt) => attempt.trim())
    .filter((attempt) => !/^\d+ charge/.test(attempt));
}
