// A Redis command sent twice, as the client sends it after a connection lost its answer (decision 041): the race
// explorer's way to play it. Armed for one key, the next script this process runs on that key runs twice, on the
// same connection, one after the other: the first run's answer is dropped, and the caller gets the second's.
// Installed once on the process's client (getRedis), and only scripts on an armed key are touched; the explorer's
// worlds run side by side, each with keys of its own.
import { Command } from 'ioredis';
import { getRedis, type RedisClient } from '../../lib/redis.ts';

const armed = new Set<string>();
let installedOn: RedisClient | undefined;

/** The next script on `key` runs twice. Returns the disarm (a no-op once it has run). */
export function sendTwice(key: string): () => void {
  install(getRedis());
  armed.add(key);
  return () => armed.delete(key);
}

function install(client: RedisClient): void {
  if (installedOn === client) return;
  installedOn = client;
  const send = client.sendCommand.bind(client) as (command: Command, ...rest: unknown[]) => unknown;
  (client as { sendCommand: unknown }).sendCommand = (command: Command, ...rest: unknown[]) => {
    // EVAL and EVALSHA: the script (or its SHA-1), the number of keys, then the first key.
    const script = command.name === 'eval' || command.name === 'evalsha';
    const key = command.args[2];
    if (script && typeof key === 'string' && armed.delete(key)) {
      const first = new Command(command.name, command.args);
      first.promise.catch(() => {}); // its answer is the one lost
      send(first);
    }
    return send(command, ...rest);
  };
}
