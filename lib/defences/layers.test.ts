// How a request's switches are named on its lane ("defences on: 0 1 2 3 4 5").
import { describe, expect, it } from 'vitest';
import { ALL_LAYERS_ON, defencesOn, type Layers } from './layers.ts';

const NONE: Layers = {
  pendingUi: false,
  token: false,
  requestKey: false,
  stateMachine: false,
  uniqueConstraint: false,
  bankKey: false,
};

describe('defencesOn', () => {
  it('numbers the layers that are on, from the pending button (0) to the bank key (5)', () => {
    expect(defencesOn(ALL_LAYERS_ON)).toBe('0 1 2 3 4 5');
    expect(defencesOn(NONE)).toBe('none');
    expect(defencesOn({ ...NONE, requestKey: true, bankKey: true })).toBe('2 5');
    expect(defencesOn({ ...ALL_LAYERS_ON, pendingUi: false, uniqueConstraint: false })).toBe('1 2 3 5');
  });

  it('answers each combination for itself, whichever was asked before', () => {
    for (let bits = 0; bits < 64; bits++) {
      const layers = Object.fromEntries(
        (Object.keys(ALL_LAYERS_ON) as Array<keyof Layers>).map((layer, number) => [
          layer,
          (bits & (1 << number)) !== 0,
        ]),
      ) as Layers;
      const expected = [0, 1, 2, 3, 4, 5].filter((number) => bits & (1 << number)).join(' ') || 'none';
      expect(defencesOn(layers)).toBe(expected);
      expect(defencesOn({ ...layers })).toBe(expected);
    }
  });
});
