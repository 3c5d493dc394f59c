/**
 * A child that speaks on the companion channel with hostile content: hundreds of distinct `error`
 * messages of half a megabyte each (memory and the stored report must stay bounded, and what was dropped
 * is counted), an OOM claimed for pid 1 on an absurd device (not believed), and texts carrying terminal
 * escapes (printed escaped while the run goes on, not only in the final report).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expectNoEscape } from './harness.js';
import { expectClean, gpumem, PROCS, type World, world } from './supervise-helpers.js';

let w: World | null = null;
afterEach(() => {
  w?.remove();
  w = null;
});

const MiB = 1024 * 1024;
const spoof = (...args: string[]): string[] => [process.execPath, join(PROCS, 'companion-spoof.mjs'), ...args];

interface Companion {
  processes: Array<{ pid: number; ooms: Array<{ device: number }>; companionErrors: Record<string, string> }>;
  problems: string[];
  notKept?: { notInRun: number; overKindLimit: Record<string, number>; overTotalBytes: number; textsCut: number };
}
const companionOf = (stdout: string): Companion =>
  (JSON.parse(stdout) as { attempts: Array<{ plugins: { companion: Companion } }> }).attempts[0]!.plugins.companion;

describe('companion channel: hostile messages', () => {
  it('400 distinct error messages of 500 KB and 100 KB: memory, report and history stay bounded; the drops are counted', async () => {
    w = world();
    const r = await gpumem(['run', '--json', '--db', w.db, '--interval-ms', '50', '--', ...spoof('errors', '400', '500000')], w.env, 60000);
    expectClean(r, 'companion error flood');
    expect(r.code).toBe(0);
    if (r.peakRssBytes > 400 * MiB) throw new Error(`HANG: companion error flood grew gpumem to ${Math.round(r.peakRssBytes / MiB)} MiB`);
    expect(r.stdout.length).toBeLessThan(2 * MiB);
    const c = companionOf(r.stdout);
    const errors = Object.values(c.processes[0]!.companionErrors);
    expect(errors.length).toBeLessThanOrEqual(16);
    expect(Math.max(...errors.map((e) => e.length))).toBeLessThan(3000);
    // The 500 KB lines are over the line limit: refused unread, counted as bad lines.
    expect(c.problems).toEqual([expect.stringMatching(/longer than the \d+ allowed \(and 199 more bad lines\)/)]);
    expect(c.notKept?.overKindLimit.error).toBe(200 - errors.length);
    expect(c.notKept?.textsCut).toBeGreaterThanOrEqual(errors.length);
    const shown = await gpumem(['runs', 'show', '1', '--db', w.db], w.env);
    expect(shown.stdout).toContain(`${200 - errors.length} over the cap on error entries`);
    expect(shown.stdout).toContain('and 199 more bad lines');
  }, 90000);

  it('an OOM claimed for pid 1 on cuda:2147483648 is not believed; the own pid on an absurd ordinal is refused', async () => {
    w = world();
    const r = await gpumem(['run', '--json', '--no-history', '--interval-ms', '50', '--', ...spoof('claims')], w.env, 30000);
    expectClean(r, 'spoofed pid');
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/OOM in pid 1 on/);
    expect(r.stderr).not.toContain('2147483648');
    const c = companionOf(r.stdout);
    expect(c.processes.map((p) => p.pid)).not.toContain(1);
    expect(c.processes[0]?.ooms.map((o) => o.device)).toEqual([0]);
    expect(c.notKept?.notInRun).toBe(2);
    expect(c.problems).toEqual([expect.stringContaining('CUDA device ordinal 2147483648 is above 1023')]);
  }, 40000);

  it('companion texts with terminal escapes print escaped while the run goes on', async () => {
    w = world();
    const r = await gpumem(['run', '--no-history', '--interval-ms', '50', '--', ...spoof('escapes')], w.env, 30000);
    expectClean(r, 'escapes in companion messages');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('companion: pid');
    expect(r.stderr).toContain('\\e]0;pwned\\x07');
    expectNoEscape(r.stderr, 'live companion lines');
    expectNoEscape(r.stdout, 'run report');
  }, 40000);
});
