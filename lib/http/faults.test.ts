import { describe, expect, it } from 'vitest';
import { faultyService } from './faults.ts';

/** An ioredis error as the production build ships it: minified, so its class name, and its `name`, is "i". */
function minified(message: string): Error {
  const i = class extends Error {
    override get name() {
      return this.constructor.name;
    }
  };
  Object.defineProperty(i, 'name', { value: 'i' });
  return new i(message);
}

describe('faultyService', () => {
  it('names Redis for the errors of a Redis outage, whatever the bundler called their classes', () => {
    for (const message of [
      'Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.',
      'Connection is closed.',
      'Command timed out',
    ]) {
      const error = minified(message);
      expect(error.name).toBe('i');
      expect(faultyService(error)).toBe('redis');
    }
  });

  it('names nothing for an error that is not a service outage', () => {
    expect(faultyService(new Error('Cannot read properties of undefined'))).toBeUndefined();
    expect(faultyService('not an error')).toBeUndefined();
  });
});
