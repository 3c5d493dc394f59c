/**
 * PyTorch's allocator numbers and step timing on /metrics: a supervisor's live companion file (as `gpumem
 * run` publishes it) for a real process on the fake driver's GPU 0 shows up as gpumem_pytorch_* and
 * gpumem_step_* with that pid, GPU and UUID; promtool accepts the output.
 */
import { spawnSync } from 'node:child_process';
import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GPU0_UUID as UUID, publishCompanion, startHarness, type Harness } from './harness.js';

const GiB = 1024 ** 3;
let h: Harness;
/** Every per-process metric carries the same labels: who, rank and job (none for this plain process), the GPU. */
const processLabels = (pid: number): string =>
  `{pid="${pid}",user="${userInfo().username}",command="sleep",container="",rank="",local_rank="",hpc_job="",namespace="",pod="",pod_uid="",gpumem_run="",gpu="0",UUID="${UUID}"}`;

beforeAll(async () => {
  h = await startHarness();
  publishCompanion(h);
});
afterAll(() => h.close());

describe('PyTorch metrics of supervised runs', () => {
  it('exports allocated, reserved, peaks and OOMs per pid and GPU', async () => {
    const text = await (await fetch(`${h.base}/metrics`)).text();
    const labels = processLabels(h.trainerPid);
    expect(text).toContain(`gpumem_pytorch_allocated_bytes${labels} ${11 * GiB}\n`);
    expect(text).toContain(`gpumem_pytorch_reserved_bytes${labels} ${14 * GiB}\n`);
    expect(text).toContain(`gpumem_pytorch_peak_allocated_bytes${labels} ${13 * GiB}\n`);
    expect(text).toContain(`gpumem_pytorch_peak_reserved_bytes${labels} ${15 * GiB}\n`);
    expect(text).toContain(`gpumem_pytorch_ooms_total${labels} 1\n`);
  });

  it('exports step time, data-wait share, samples/s and the step counters, and promtool accepts them', async () => {
    const text = await (await fetch(`${h.base}/metrics`)).text();
    const labels = processLabels(h.trainerPid);
    const value = (name: string): number => {
      const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
      expect(line, name).toBeDefined();
      return Number(line!.slice(line!.lastIndexOf(' ') + 1));
    };
    expect(value('gpumem_step_seconds')).toBeCloseTo(0.25, 12);
    expect(value('gpumem_data_wait_ratio')).toBeCloseTo(0.4, 12);
    // The samples of the 40 completed steps (the first fetch starts the clock) over their 10 s.
    expect(value('gpumem_samples_per_second')).toBeCloseTo((32 * 41 * 40) / 41 / 10, 9);
    expect(value('gpumem_steps_total')).toBe(40);
    expect(value('gpumem_step_seconds_total')).toBeCloseTo(10, 9);
    expect(value('gpumem_data_wait_seconds_total')).toBeCloseTo(4, 9);
    // No token ids in the batches: no tokens/s sample rather than a 0.
    expect(text).not.toMatch(/^gpumem_tokens_per_second\{/m);
    expect(text).toContain('# TYPE gpumem_steps_total counter');
    const own = text.split('\n\n').filter((block) => !block.includes('DCGM_FI_')).join('\n\n');
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: own, encoding: 'utf8' });
    expect(`${checked.stdout}${checked.stderr}`).toBe('');
    expect(checked.status).toBe(0);
  });

  it('gives OpenMetrics counters their _total sample once', async () => {
    const text = await (await fetch(`${h.base}/metrics`, { headers: { Accept: 'application/openmetrics-text; version=1.0.0' } })).text();
    expect(text).toContain('# TYPE gpumem_steps counter');
    expect(text).toContain(`\ngpumem_steps_total${processLabels(h.trainerPid)} 40\n`);
  });
});
