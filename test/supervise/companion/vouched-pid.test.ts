/**
 * The companion channel believes a message only from a process of the run, which /proc can confirm only
 * while that process exists. A short program's messages can be read after it exited and was reaped (an OOM
 * report sent as it dies): the run's own child, which the supervisor started, is vouched for by pid, so its
 * messages are kept whenever they are read, and so are those of every process the run's tree scans found (a
 * DataLoader worker, a rank); a pid nobody vouched for and /proc does not confirm is still refused.
 */
import { createConnection } from 'node:net';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CompanionServer, companionPlugin } from '../../../src/supervise/companion/index.js';
import { superviseRun, type AttemptContext } from '../../../src/supervise/index.js';
import { claimsSource, sink, tempDir } from '../helpers/claims.js';

const hello = (pid: number): string => `${JSON.stringify({
  schemaVersion: 1, type: 'hello', pid, timeMs: 1, ppid: 1, companionVersion: '0.1.0', torchVersion: '2.11.0', pythonVersion: '3.11.0',
  capabilities: {}, config: { rateHz: 10, snapshotDir: null, snapshotMaxEntries: 20000, memoryFraction: null },
})}\n`;

/** Writes `text` on a connection of its own to the channel at `channel` ("unix:PATH") and waits for it to close. */
function send(channel: string, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(channel.slice('unix:'.length), () => socket.end(text));
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
}

/** Waits until `done()` or about two seconds have passed (the server reads the socket on its own turn). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('companion channel: the run\'s own child is believed after it is gone', () => {
  it('keeps the messages of a vouched-for pid that /proc no longer confirms, and still refuses any other', async () => {
    // /proc confirms nobody here: both pids stand for processes that have exited.
    const server = await CompanionServer.start({ isRunProcess: () => false });
    try {
      server.vouchFor(424242);
      const channel = server.env({}).GPUMEM_COMPANION_CHANNEL as string;
      await send(channel, hello(424242));
      await send(channel, hello(424243));
      await until(() => server.state.has(424242) && server.drops.notInRun === 1);
      expect([...server.state.keys()]).toEqual([424242]);
      expect(server.drops.notInRun).toBe(1);
    } finally {
      await server.close(0);
    }
  });

  it('the run plugin vouches for the child it is told was spawned', async () => {
    const plugin = companionPlugin({ isRunProcess: () => false });
    const env = { PATH: process.env.PATH ?? '' };
    const added = (await plugin.beforeSpawn?.({ attempt: 1, batch: null, env })) as Record<string, string>;
    plugin.onSpawn?.({ attempt: 1, batch: null, env, pid: 525252 });
    await send(added.GPUMEM_COMPANION_CHANNEL as string, hello(525252));
    await send(added.GPUMEM_COMPANION_CHANNEL as string, hello(525253));
    await until(() => plugin.state().has(525252));
    expect([...plugin.state().keys()]).toEqual([525252]);
    await plugin.afterAttempt?.({ attempt: 1, batch: null, env, exit: {} as never });
  });

  it('the run plugin also believes the pids the run\'s tree held, and no other', async () => {
    const plugin = companionPlugin({ isRunProcess: () => false });
    const env = { PATH: process.env.PATH ?? '' };
    const added = (await plugin.beforeSpawn?.({ attempt: 1, batch: null, env })) as Record<string, string>;
    plugin.onSpawn?.({ attempt: 1, batch: null, env, pid: 525252, wasRunProcess: (pid) => pid === 535353 });
    const channel = added.GPUMEM_COMPANION_CHANNEL as string;
    for (const pid of [535353, 545454]) await send(channel, hello(pid));
    await until(() => plugin.state().has(535353));
    await plugin.afterAttempt?.({ attempt: 1, batch: null, env, exit: {} as never });
    expect([...plugin.state().keys()]).toEqual([535353]);
  });
});

describe('an attempt tells its plugins which processes its tree held', () => {
  it('a worker of the child counts after it exited; gpumem itself never does', async () => {
    const tmp = tempDir('gpumem-vouch-');
    try {
      const out = sink();
      let seen: AttemptContext | undefined;
      let answers: { worker: boolean; child: boolean; gpumem: boolean; workerGone: boolean } | undefined;
      // The child starts a worker, prints its pid, and waits for it: the tree scans (every 20 ms) find it.
      await superviseRun({
        argv: ['sh', '-c', 'sleep 0.4 & echo $!; wait'], source: claimsSource(tmp.dir, [{ totalBytes: 1 << 30 }]),
        env: { PATH: process.env.PATH ?? '' }, stdout: out, stderr: sink(), log: () => {}, intervalMs: 20, graceMs: 300, settleMs: 100, cleanupTimeoutMs: 2000,
        plugins: [{
          name: 'probe',
          onSpawn: (ctx) => void (seen = ctx),
          afterAttempt: (ctx) => {
            const worker = Number(out.text().trim());
            const ask = ctx.wasRunProcess ?? (() => false);
            answers = { worker: ask(worker), child: ask(ctx.pid ?? -1), gpumem: ask(process.pid), workerGone: !existsSync(`/proc/${worker}`) };
          },
        }],
      });
      expect(seen?.wasRunProcess).toBeTypeOf('function');
      expect(answers).toEqual({ worker: true, child: true, gpumem: false, workerGone: true });
    } finally {
      tmp.remove();
    }
  });
});
