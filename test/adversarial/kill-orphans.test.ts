/**
 * `gpumem kill --orphans` means what a user means by an orphan: its launcher is gone AND it does nothing.
 * A job started with nohup (parent 1 too) that still computes must never be selected.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { expectNoHang, expectNoStackTrace, gpumem, tempDir } from './harness.js';

const tmp = tempDir('gpumem-adv-orphans-');
const pids: number[] = [];
afterAll(() => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  tmp.remove();
});

/** Starts `script` in a shell that exits at once, so the process is re-parented, as after a crash or nohup. */
function detached(script: string): number {
  const r = spawnSync('/bin/sh', ['-c', `${script} >/dev/null 2>&1 & echo $!`], { encoding: 'utf8' });
  const pid = Number(r.stdout.trim());
  pids.push(pid);
  return pid;
}

const ppidOf = (pid: number): number => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);

describe('gpumem kill --orphans', () => {
  it('selects an idle process whose parent died, never a computing nohup-style job', async () => {
    const idle = detached('exec sleep 61');
    const busy = detached(`exec ${process.execPath} -e "for (;;) {}"`);
    await new Promise((r) => setTimeout(r, 300));
    // Both must really be re-parented to pid 1 here, or this test proves nothing.
    expect([ppidOf(idle), ppidOf(busy)]).toEqual([1, 1]);
    const scenario = join(tmp.dir, 'scenario.txt');
    writeScenario(scenario, {
      driverVersion: '590.44.01', cudaVersion: 13010,
      devices: [fakeH100(0, { processes: [idle, busy].map((pid) => ({ pid, usedBytes: 3 * 1024 ** 3, smUtilPct: 0 })) })],
    });
    const r = await gpumem(['kill', '--orphans', '--dry-run', '--json'], { env: fakeNvmlEnv('590', scenario) });
    expectNoHang(r, 'kill --orphans');
    expectNoStackTrace(r, 'kill --orphans');
    const rows = (JSON.parse(r.stdout) as { rows: Array<{ pid: number }> }).rows.map((row) => row.pid);
    expect(rows).toContain(idle);
    expect(rows).not.toContain(busy);
  });
});
