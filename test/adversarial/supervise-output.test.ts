/**
 * Faults of gpumem's own output during a supervised run: the reader goes away (`gpumem run … | head -1`)
 * or stops reading. The child must stay supervised, its status must be returned, and gpumem's memory must
 * stay bounded whatever the child prints. Real gpumem processes over the fake NVML driver, bounded in time.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expectClean, node, sleep, startGpumem, until, type World, world } from './supervise-helpers.js';

let w: World | null = null;
afterEach(() => {
  w?.remove();
  w = null;
});

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

describe('supervise faults: the output reader', () => {
  it('a closed stdout (| head -1) stops the forwarding only: the child runs to its end and its status is returned', async () => {
    w = world();
    const done = join(w.dir, 'done');
    const g = startGpumem(['run', '--no-history', '--no-companion', '--', ...node('chatty.mjs', '--lines', '60', '--every-ms', '20', '--done', done, '--exit', '5')], w.env, 15000);
    await until(() => /line 0/.test(g.output()), 10000);
    g.child.stdout?.destroy();
    const r = await g.done;
    expectClean(r, 'gpumem run');
    expect(existsSync(done)).toBe(true);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('gpumem run: exit 5');
    expect(r.stderr).not.toMatch(/internal error|EPIPE|\n\s+at /);
  });

  it('with stdout and stderr both closed (2>&1 | head -1) the status is still the child\'s', async () => {
    w = world();
    const done = join(w.dir, 'done');
    const g = startGpumem(['run', '--no-history', '--no-companion', '--', ...node('chatty.mjs', '--lines', '60', '--every-ms', '20', '--done', done, '--exit', '3')], w.env, 15000);
    await until(() => /line 0/.test(g.output()), 10000);
    g.child.stdout?.destroy();
    g.child.stderr?.destroy();
    const r = await g.done;
    expectClean(r, 'gpumem run');
    expect(existsSync(done)).toBe(true);
    expect(r.code).toBe(3);
  });

  it('a reader that stops reading pauses the child instead of growing gpumem\'s memory; all output arrives once it reads again', async () => {
    w = world();
    const mb = 160;
    const g = startGpumem(['run', '--no-history', '--no-companion', '--', ...node('chatty.mjs', '--mb', String(mb))], w.env, 60000);
    // The test's end of the pipe stops reading at once: the child's output backs up into gpumem.
    g.child.stdout?.pause();
    let received = 0;
    await until(() => /expandable_segments/.test(g.output()), 10000);
    await sleep(3000);
    const pid = g.child.pid as number;
    const rss = rssBytes(pid);
    // Without backpressure gpumem holds the whole output (> 160 MiB) within these seconds.
    expect(rss).toBeLessThan(120 * 1024 * 1024);
    g.child.stdout?.on('data', (c: Buffer) => (received += c.length));
    g.child.stdout?.resume();
    const r = await g.done;
    expectClean(r, 'gpumem run');
    expect(r.code).toBe(0);
    expect(received).toBeGreaterThanOrEqual(mb * 1024 * 1024);
  }, 70000);
});
