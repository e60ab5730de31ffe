// A TCP proxy between this process's Redis client and the real Redis that can lose one answer: the command goes
// through, Redis applies it, and the connection drops before its answer comes back (a network blip, a failover, a
// load balancer's idle cut). The client then connects again and sends the command again: ioredis does so for every
// command still unanswered (autoResendUnfulfilledCommands, on by default), as any client that retries would. The
// same command runs twice, and the caller gets the second run's answer.
import net from 'node:net';

export type LostReplyProxy = {
  /** REDIS_URL through the proxy: the same database as `target`. */
  url: string;
  /**
   * The next request whose text `matches` is forwarded; once `applied()` says Redis has applied it, the connection
   * is cut before its answer comes back. Resolves when cut. Every later connection goes through untouched.
   */
  loseReplyTo(matches: (request: string) => boolean, applied: () => Promise<boolean>): Promise<void>;
  close(): Promise<void>;
};

export async function lostReplyProxy(target: string): Promise<LostReplyProxy> {
  const to = new URL(target);
  let armed:
    | { matches: (request: string) => boolean; applied: () => Promise<boolean>; cut: (error?: Error) => void }
    | undefined;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const redis = net.connect(Number(to.port), to.hostname);
    sockets.add(client).add(redis);
    let holding = false; // from the matched request on, Redis's answers are kept from the client, then dropped
    redis.on('data', (chunk) => {
      if (!holding) client.write(chunk);
    });
    client.on('data', (chunk) => {
      const rule = armed;
      if (rule && !holding && rule.matches(chunk.toString('utf8'))) {
        armed = undefined;
        holding = true;
        redis.write(chunk);
        void untilApplied(rule.applied).then(
          () => {
            client.destroy();
            redis.destroy();
            rule.cut();
          },
          (error: Error) => rule.cut(error),
        );
        return;
      }
      redis.write(chunk);
    });
    const end = () => {
      client.destroy();
      redis.destroy();
      sockets.delete(client);
      sockets.delete(redis);
    };
    client.on('close', end).on('error', end);
    redis.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    loseReplyTo: (matches, applied) =>
      new Promise<void>((resolve, reject) => {
        armed = { matches, applied, cut: (error) => (error ? reject(error) : resolve()) };
      }),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `applied` until it holds, for at most 10 s: the command reached Redis and ran. */
async function untilApplied(applied: () => Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
    if (await applied()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the matched command was not applied within 10 s');
}
