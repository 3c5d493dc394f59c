/** The process and detail panels as text, numbers checked: CPU % and RSS columns, launcher lines, utilisation and steps. */
import { describe, expect, it } from 'vitest';
import { diagnose } from '../../../src/core/diagnose/index.js';
import type { StepSummary } from '../../../src/core/companion/index.js';
import type { GpuProcess, Sample } from '../../../src/core/index.js';
import { detailPanel } from '../../../src/cli/watch/detail-panel.js';
import { addStepRecord, createStepHistory, forecastMemory, type MemoryForecast } from '../../../src/core/forecast/index.js';
import { orderRows, processPanel, selectablePids } from '../../../src/cli/watch/process-panel.js';
import { initialState } from '../../../src/cli/watch/state.js';
import { renderFrame } from '../../../src/cli/watch/view.js';
import { visibleLength } from '../../../src/cli/render/style.js';
import { device, GiB, host, MiB, proc, sample } from '../../core/diagnose/build.js';

const plain = (_c: unknown, text: string): string => text;
const TORCHRUN = { ...host(100, { ppid: 1, cmd: ['/usr/bin/python3', '/usr/bin/torchrun', '--nproc-per-node', '2', 'train.py'] }) };

/** A torchrun job (launcher 100 holds no GPU memory) with ranks 101 and 102 and a DataLoader worker 103 of rank 101. */
function job(timeMs: number, smUtilPct: number): Sample {
  const withUsage = (p: GpuProcess, cpuPct: number, rssBytes: number): GpuProcess => ({ ...p, host: { ...p.host!, cpuPct, rssBytes } });
  return sample(timeMs, [device(0, 21 * GiB, { utilPct: 80 }), device(1, 20 * GiB, { utilPct: 60 })], [
    withUsage(proc(101, 0, 20 * GiB, { ppid: 100, smUtilPct, startTimeMs: timeMs - 3_600_000 }), 150.5, 3 * GiB),
    withUsage(proc(102, 1, 19 * GiB, { ppid: 100, smUtilPct: 40 }), 98, 2 * GiB + 512 * MiB),
    withUsage(proc(103, 0, 500 * MiB, { ppid: 101, cmd: ['python', 'train.py'], smUtilPct: 0 }), 12, 700 * MiB),
  ]);
}

const reportOf = (s: Sample) => diagnose({ samples: [s], viewer: { uid: 1000, user: 'alice' }, pidNamespace: 'host', ancestors: { 100: TORCHRUN } }, []);

describe('process panel', () => {
  it('puts the launcher on a line of its own above its ranks and their workers; only GPU rows are selectable', () => {
    const rows = orderRows(reportOf(job(5_000_000, 30)), initialState(false));
    // Worker 103 belongs to rank 101: it is drawn under 101, before rank 102.
    expect(rows.map((r) => [r.pid, r.depth, r.view === null])).toEqual([[100, 0, true], [101, 1, false], [103, 2, false], [102, 1, false]]);
    expect(selectablePids(rows)).toEqual([101, 103, 102]);
  });

  it('shows CPU % and RSS per row; 80 columns drop the age, 120 show it, no line is wider than the terminal', () => {
    const s = job(5_000_000, 30);
    const report = reportOf(s);
    const rows = orderRows(report, initialState(false));
    const state = { ...initialState(false), selectedPid: 101 };
    const narrow = processPanel(rows, s, [s], state, 80, 20, plain);
    expect(narrow[0]).toMatch(/PID\s+USER\s+GPU\s+GPU MEM\s+SM\s+CPU\s+RSS\s+COMMAND/);
    expect(narrow[0]).not.toContain('AGE');
    const rank = narrow.find((l) => /^\S* +101 /.test(l.replace('\u001b[7m', '')))!;
    expect(rank).toMatch(/101\s+alice\s+0\s+20\.00 GiB\s+30%\s+151%\s+3\.0 GiB\s+└ python train\.py/);
    expect(narrow.find((l) => / 103 /.test(l))).toMatch(/500\.00 MiB\s+0%\s+12%\s+700\.0 MiB\s+ {2}└ python train\.py/);
    expect(narrow[1]).toMatch(/^ {2}100\s+alice\s+39\.49 GiB\s+\(launcher of 3\) \/usr/);
    expect(processPanel(rows, s, [s], state, 160, 20, plain)[1]).toMatch(/\(launcher of 3\) \/usr\/bin\/python3 \/usr\/bin\/torchrun --nproc-per-node 2 train\.py$/);
    const wide = processPanel(rows, s, [s], state, 120, 20, plain);
    expect(wide[0]).toContain('AGE');
    expect(wide.find((l) => / 101 /.test(l))).toMatch(/3\.0 GiB\s+1h00m\s+└/);
    const frame = renderFrame({ sample: s, history: [s], report, rows, viewerUid: 1000, state, columns: 80, height: 24, color: false });
    expect(frame).toHaveLength(24);
    for (const line of frame) expect(visibleLength(line)).toBeLessThanOrEqual(80);
  });

  it('leaves CPU and RSS out where no row has them (a recording)', () => {
    const s = sample(5_000_000, [device(0, 21 * GiB)], [proc(101, 0, 20 * GiB)]);
    const header = processPanel(orderRows(reportOf(s), initialState(false)), s, [s], initialState(false), 120, 20, plain)[0]!;
    expect(header).toMatch(/SM\s+AGE\s+COMMAND/);
    expect(header).not.toMatch(/CPU|RSS/);
  });

  it('counts ages to the newest sample, so an equal sample drawn later shows them current', () => {
    const s = job(5_000_000, 30);
    const rows = orderRows(reportOf(s), initialState(false));
    const later = { ...s, timeMs: s.timeMs + 90_000 };
    expect(processPanel(rows, later, [s], initialState(false), 120, 20, plain).find((l) => / 101 /.test(l))).toMatch(/3\.0 GiB\s+1h01m\s+└/);
  });
});

describe('detail panel', () => {
  const history = [job(1_000, 10), job(2_000, 20), job(3_000, 60)];
  const report = reportOf(history[2]!);
  it('shows the SM share and GPU utilisation over the history with now / mean / max, and host CPU and RSS', () => {
    const lines = detailPanel(101, report, history, 120, plain, history[2]);
    expect(lines).toContain('  host: CPU 150.5% of a core  RSS 3.00 GiB');
    expect(lines.find((l) => l.startsWith('  SM share'))).toMatch(/now 60%  mean 30%  max 60%$/);
    expect(lines.find((l) => l.startsWith('  GPU util'))).toMatch(/now 80%  mean 80%  max 80%$/);
    expect(lines.at(-1)).toMatch(/steps: not known/);
  });

  it('shows the step timing of a supervised run and says when it is input-bound', () => {
    const steps: StepSummary = { steps: 120, meanStepMs: 250, meanDataWaitMs: 100, dataWaitShare: 0.4, samplesPerSec: 256, batchSeen: 64, batchMin: 64, batchMax: 64, batchAsked: null };
    const lines = detailPanel(101, report, history, 120, plain, history[2], steps);
    expect(lines.at(-1)).toBe('  steps: 120 steps of 250.0 ms, 40% waiting for data, 256.0 samples/s, batch 64  input-bound');
  });

  it('shows the OOM forecast of a supervised run: growth with its step, or flat', () => {
    const forecastOf = (leak: number): MemoryForecast => {
      const h = createStepHistory(0, 'optimizer');
      for (let step = 1; step <= 200; step++) addStepRecord(h, { step, leftBytes: GiB + step * leak, peakAllocatedBytes: 2 * GiB + step * leak, reservedBytes: 2 * GiB, peakReservedBytes: 2 * GiB + step * leak });
      return forecastMemory(h, { limitBytes: 3 * GiB }) as MemoryForecast;
    };
    const leaking = detailPanel(101, report, history, 120, plain, history[2], null, [forecastOf(2 * MiB)]);
    // 1 GiB − 400 MiB left at 2 MiB a step: 312 steps after step 200.
    expect(leaking.at(-1)).toBe('  forecast: cuda:0: memory left behind grows 2.00 MiB a step since step 101 (1.39 GiB at step 200); at this rate the step peak reaches the 3.00 GiB available at step 512 (312 steps from now)');
    const flat = detailPanel(101, report, history, 120, plain, history[2], null, [forecastOf(0)]);
    expect(flat.at(-1)).toBe('  forecast: cuda:0: flat at step 200 (no growth, no periodic spike)');
  });
});
