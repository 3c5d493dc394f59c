/**
 * `gpumem kill --orphans` means what a user means by an orphan: its launcher is gone AND it does nothing.
 * A job started with nohup (parent 1 too) that still computes must never be selected.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { detached, endDetached, expectNoHang, expectNoStackTrace, gpumem, ppidOf, tempDir } from './harness.js';

const tmp = tempDir('gpumem-adv-orphans-');
afterAll(() => {
  endDetached();
  tmp.remove();
});


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
