// How a request's switches are named on its lane ("defences on: 0 1 2 3 4 5").
import { describe, expect, it } from 'vitest';
import { ALL_LAYERS_ON, defencesOn, type Layers } from './layers.ts';

const NAMES = Object.keys(ALL_LAYERS_ON) as Array<keyof Layers>;
/** The switches with these bits on: bit 0 the pending button (layer 0), bit 5 the bank's key. */
const withBits = (bits: number) =>
  Object.fromEntries(NAMES.map((layer, number) => [layer, (bits & (1 << number)) !== 0])) as Layers;

describe('defencesOn', () => {
  it('numbers the layers that are on, from the pending button (0) to the bank key (5)', () => {
    expect(defencesOn(ALL_LAYERS_ON)).toBe('0 1 2 3 4 5');
    expect(defencesOn(withBits(0))).toBe('none');
    expect(defencesOn({ ...withBits(0), requestKey: true, bankKey: true })).toBe('2 5');
    expect(defencesOn({ ...ALL_LAYERS_ON, pendingUi: false, uniqueConstraint: false })).toBe('1 2 3 5');
  });

  it('answers each combination for itself, whichever was asked before', () => {
    for (let bits = 0; bits < 64; bits++) {
      const expected = [0, 1, 2, 3, 4, 5].filter((number) => bits & (1 << number)).join(' ') || 'none';
      expect(defencesOn(withBits(bits))).toBe(expected);
      expect(defencesOn({ ...withBits(bits) })).toBe(expected);
    }
  });
});
