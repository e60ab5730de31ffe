// The workshop guide's exercise 7, run as printed (docs/workshop.md, the block tagged exercise-7) against
// the test server, and held to what the guide says it prints. Exercise 10's block needs the cluster and
// runs with the cluster's scenarios (e2e/scenarios/cluster.spec.ts).
import { expect, test } from './fixtures';
import { guideBlock, runGuideBlock, runsOf } from './guide';

test('@guide exercise 7: a client that gives up after 0.5 s and retries, with every layer on and with layers 2-5 off', async ({
  baseURL,
}) => {
  const output = await runGuideBlock(guideBlock('exercise-7'), baseURL ?? '');
  const [allOn = '', serverLayersOff = ''] = runsOf(output);
  // Every layer on: the first attempt is not answered in time; later ones are told to wait, or get its answer.
  expect(allOn).toContain('attempt 1: no answer within 0.5 s, retrying');
  expect(allOn).toMatch(/^HTTP\/1\.1 409 /m);
  expect(allOn).toMatch(/^retry-after: 1\r?$/im);
  expect(allOn).toMatch(/^HTTP\/1\.1 201 /m);
  expect(allOn).toMatch(/^idempotent-replayed: true\r?$/im);
  expect(allOn).toMatch(/^1 charge\(s\)$/m);
  // Layers 2-5 off: nothing is answered within 0.5 s, and every attempt charged.
  expect(serverLayersOff.match(/no answer within 0\.5 s/g)).toHaveLength(4);
  expect(serverLayersOff).not.toMatch(/^HTTP/m);
  expect(serverLayersOff).toMatch(/^4 charge\(s\)$/m);
});
