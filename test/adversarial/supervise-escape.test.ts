/**
 * Processes that leave the run: a helper that double-forks with setsid before the first sample (with its
 * environment kept, and scrubbed), a process outside the run that appears on the run's GPU, and gpumem
 * itself killed with SIGKILL. Real processes over the fake NVML driver, each bounded in time.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { GiB, alive } from '../supervise/helpers/claims.js';
import { expectAllEnded, expectClean, gpumem, node, PROCS, startGpumem, until, type World, world } from './supervise-helpers.js';

let w: World | null = null;
const stray: number[] = [];
afterEach(() => {
  for (const pid of stray.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  w?.remove();
  w = null;
});

interface Report {
  peaks: Array<{ index: number; peakBytes: number }>;
  attempts: Array<{ cleanup: { leftovers: Array<{ pid: number; outcome: string }> }; appeared?: Array<{ pid: number; index: number; maxUsedBytes: number }> }>;
}

const helperPid = (out: string): number => Number(/helper (\d+)/.exec(out)?.[1] ?? 0);

describe('supervise faults: processes that leave the run', () => {
  for (const scrub of [false, true]) {
    it(`a helper that double-forks with setsid before the first sample${scrub ? ' and scrubs its environment' : ''} is counted and ended`, async () => {
      w = world();
      // A 1 s interval: the double fork is over long before the second sample.
      const args = ['run', '--gpus', '1', '--no-history', '--no-companion', '--json', '--interval-ms', '1000', '--grace-ms', '500', '--',
        ...node('escaper.mjs', '--claim', `1:${3 * GiB}`, '--hold-ms', '2500', ...(scrub ? ['--scrub', '1'] : []))];
      const r = await gpumem(args, w.env, 30000);
      const pid = helperPid(r.stderr);
      if (pid) stray.push(pid);
      expectClean(r, 'gpumem run');
      expect(pid).toBeGreaterThan(0);
      const report = JSON.parse(r.stdout) as Report;
      expect(report.peaks).toEqual([expect.objectContaining({ index: 1, peakBytes: 3 * GiB })]);
      expect(report.attempts[0]?.cleanup.leftovers).toEqual([expect.objectContaining({ pid, outcome: 'terminated' })]);
      expectAllEnded([pid], 'double-forked helper after the run');
    }, 40000);
  }

  it('memory on the run\'s GPU held by a process outside the run that appeared during it is reported', async () => {
    w = world();
    const g = startGpumem(['run', '--gpus', '1', '--no-history', '--no-companion', '--json', '--interval-ms', '50', '--',
      ...node('worker-tree.mjs', '--hold-ms', '2500')], w.env, 30000);
    await until(() => /started 0 workers/.test(g.output()), 10000);
    // Not a child of gpumem: started by the test, in its own session.
    const other = spawn(process.execPath, [`${PROCS}/worker-tree.mjs`, '--claim', `1:${2 * GiB}`, '--hold-ms', '5000'], { env: w.env, detached: true, stdio: 'ignore' });
    stray.push(other.pid as number);
    const r = await g.done;
    expectClean(r, 'gpumem run');
    const report = JSON.parse(r.stdout) as Report;
    expect(report.attempts[0]?.appeared).toEqual([expect.objectContaining({ pid: other.pid, index: 1, maxUsedBytes: 2 * GiB })]);
    expect(r.stderr).toContain(`pid ${other.pid} appeared holding 2.00 GiB`);
    expect(alive(other.pid as number)).toBe(true);
  }, 40000);

  it('gpumem killed with SIGKILL: the watchdog ends the whole run (group, orphaned workers, escaped helper)', async () => {
    w = world();
    const g = startGpumem(['run', '--gpus', '1', '--no-history', '--no-companion', '--grace-ms', '500', '--interval-ms', '1000', '--', 'sh', '-c',
      `${process.execPath} ${PROCS}/escaper.mjs --claim 1:${GiB} --hold-ms 60000 & ${process.execPath} ${PROCS}/worker-tree.mjs --workers 2 --worker-mode orphan --worker-claim 1:${GiB} --hold-ms 60000; wait`], w.env, 40000);
    await until(() => /started 2 workers/.test(g.output()) && /helper \d+/.test(g.output()), 15000);
    const helper = helperPid(g.output());
    expect(helper).toBeGreaterThan(0);
    stray.push(helper);
    const claimants = (): number[] => readClaimPids((w as World).dir);
    await until(() => claimants().length >= 3, 5000);
    const members = claimants();
    stray.push(...members);
    expect(members.length).toBeGreaterThanOrEqual(3);
    g.child.kill('SIGKILL');
    await g.done;
    await until(() => members.every((pid) => !alive(pid)) && !alive(helper), 8000);
    expectAllEnded([...members, helper], 'the run after gpumem was killed with SIGKILL');
  }, 60000);
});

function readClaimPids(dir: string): number[] {
  return readdirSync(dir).map((n) => /^(\d+)-\d+$/.exec(n)?.[1]).filter((x): x is string => x !== undefined).map(Number).filter((pid) => alive(pid));
}
