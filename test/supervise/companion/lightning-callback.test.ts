/**
 * gpumem_torch's Lightning callback in a real `lightning.Trainer` on the CPU (.venv: torch, lightning, tensorboard)
 * with a CSVLogger and a TensorBoardLogger: its figures reach both loggers through the module's `log_dict`, once per
 * optimizer step (with gradient accumulation too), read back from metrics.csv and from the event files (tensorboard's own reader). The times match a
 * dataset that sleeps 3 ms per item; on the CPU there is no allocator to read, so no memory figure may appear —
 * unless a stand-in for torch's allocator counters is installed (GPUMEM_TEST_COUNTERS=leak): then the memory
 * figures and the OOM forecast travel the same path into both loggers as on a GPU, and are checked to the byte.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { requireTestPython } from '../../setup/python-venv.js';
import { companionSetup, gpumem } from '../helpers/companion-e2e.js';
import { runProcess } from '../../helpers/run-process.js';

const ROOT = resolve(__dirname, '../../..');
const SCRIPT = join(ROOT, 'test/python/scripts/lightning_trainer_cpu.py');

type Series = Record<string, Record<string, number>>;
interface Logged { csv: Series; tensorboard: Series; event_files: number; log_dir: string; oom_folder: string }

/** Lightning's step column counts from 0: row s is optimizer step s + 1 (12 steps, rows 0–11). */
const ROWS = Array.from({ length: 12 }, (_, s) => String(s));

function checkLogged(out: Logged, dir: string, batchesPerStep = 1): void {
  expect(out.event_files).toBe(1);
  // OOM files go where the first logger writes (here the CSVLogger's version folder, beside metrics.csv). On the CPU
  // no OOM can happen (torch refuses the observer without a driver): only the folder is checked here.
  expect(out.log_dir).toBe(join(dir, 'csv', 'version_0'));
  expect(out.oom_folder).toBe(out.log_dir);
  for (const series of [out.csv, out.tensorboard]) {
    // The trainer's own metric is there at every step: the logging itself ran at each one.
    expect(Object.keys(series.train_loss ?? {})).toEqual(expect.arrayContaining(ROWS));
    expect(Object.keys(series).filter((k) => k.startsWith('gpumem/')).sort()).toEqual(['gpumem/data_wait_ms', 'gpumem/step_ms']);
    // The first step has no step before it to time from: neither time is known (not zero), so none is logged.
    for (const name of ['gpumem/step_ms', 'gpumem/data_wait_ms']) expect(Object.keys(series[name]!).sort((a, b) => +a - +b)).toEqual(ROWS.slice(1));
    for (const row of ROWS.slice(1)) {
      // Four items of 3 ms each are loaded per batch: the wait is at least that for each batch of the step, and
      // the step at least its wait.
      const wait = series['gpumem/data_wait_ms']![row]!;
      expect(wait).toBeGreaterThanOrEqual(12 * batchesPerStep);
      expect(series['gpumem/step_ms']![row]!).toBeGreaterThanOrEqual(wait);
    }
  }
  // Both loggers got the same numbers for the same steps.
  for (const name of ['gpumem/step_ms', 'gpumem/data_wait_ms']) expect(out.tensorboard[name]).toEqual(out.csv[name]);
}

it('a real Lightning Trainer logs gpumem/step_ms and gpumem/data_wait_ms at each step to CSV and TensorBoard', async () => {
  const python = requireTestPython();
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-lightning-'));
  try {
    const r = await runProcess(python, [SCRIPT, dir], {
      encoding: 'utf8', env: { ...process.env, PYTHONPATH: join(ROOT, 'python'), PYTHONDONTWRITEBYTECODE: '1' }, timeout: 150_000, maxBuffer: 1 << 26,
    });
    expect(r.status, r.stderr).toBe(0);
    checkLogged(JSON.parse(r.stdout.trim().split('\n').pop() as string) as Logged, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 180_000);

it('with gradient accumulation the callback logs once per optimizer step, timing all of the step\'s batches', async () => {
  const python = requireTestPython();
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-lightning-acc-'));
  try {
    // 24 batches, two per optimizer step: still 12 rows, each with the wait of both batches (logged per batch, the
    // second would overwrite the first, and the wait would be one batch's).
    const r = await runProcess(python, [SCRIPT, dir, '2'], {
      encoding: 'utf8', env: { ...process.env, PYTHONPATH: join(ROOT, 'python'), PYTHONDONTWRITEBYTECODE: '1' }, timeout: 150_000, maxBuffer: 1 << 26,
    });
    expect(r.status, r.stderr).toBe(0);
    checkLogged(JSON.parse(r.stdout.trim().split('\n').pop() as string) as Logged, dir, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 180_000);

it('under gpumem run the Lightning callback logs the companion\'s step timing: the same figures', async () => {
  const python = requireTestPython();
  const cleanups: Array<() => void> = [];
  try {
    const { dir, env } = companionSetup(cleanups);
    const r = await gpumem(['run', '--no-history', '--source', 'nvml', '--', python, SCRIPT, join(dir, 'trainer')],
      { ...env, PYTHONPATH: join(ROOT, 'python') });
    expect(r.code, r.stderr).toBe(0);
    // The companion runs in the trainer's process; its DataLoader wrapper is the only one, so data_wait_ms is its.
    expect(r.stderr).toMatch(/companion: pid \d+ runs torch 2\.\d+.* with no CUDA device/);
    checkLogged(JSON.parse(r.stdout.trim().split('\n').pop() as string) as Logged, join(dir, 'trainer'));
  } finally {
    cleanups.forEach((f) => f());
  }
}, 180_000);

it('with a stand-in for the allocator counters, memory, step peaks and the OOM forecast reach both loggers exactly', async () => {
  const python = requireTestPython();
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-lightning-mem-'));
  try {
    const r = await runProcess(python, [SCRIPT, dir], {
      env: { ...process.env, PYTHONPATH: join(ROOT, 'python'), PYTHONDONTWRITEBYTECODE: '1', GPUMEM_TEST_COUNTERS: 'leak' }, timeout: 150_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop() as string) as Logged;
    // The script's stand-in: 512 MiB at the start, each step leaves 4 MiB more and peaks 64 MiB above what the
    // step before left, on a 1 GiB device. Row s is optimizer step s + 1.
    const MiB = 1024 * 1024;
    const [base, leak, spike, total] = [512 * MiB, 4 * MiB, 64 * MiB, 1024 * MiB];
    const rows = Array.from({ length: 40 }, (_, s) => String(s));
    for (const series of [out.csv, out.tensorboard]) {
      expect(rows.map((row) => series['gpumem/allocated_bytes']?.[row])).toEqual(rows.map((_, s) => base + (s + 1) * leak));
      expect(rows.map((row) => series['gpumem/step_peak_allocated_bytes']?.[row])).toEqual(rows.map((_, s) => base + s * leak + spike));
      // A growth of exactly 4 MiB a step, named once the forecast has its 20 steps and the later half confirms it;
      // the usual peak reaches the device at step (1 GiB − 512 MiB − 64 MiB) / 4 MiB + 1 = 113.
      const named = Object.keys(series['gpumem/forecast_growth_bytes_per_step'] ?? {});
      expect(named.length).toBeGreaterThan(0);
      for (const row of named) {
        expect(series['gpumem/forecast_growth_bytes_per_step']![row]).toBe(leak);
        expect(series['gpumem/forecast_oom_step']![row]).toBe((total - base - spike) / leak + 1);
        expect(series['gpumem/forecast_warning']![row]).toBe(1);
      }
      // No warning before the growth is named: a short history raises no alarm.
      for (const row of rows.filter((x) => !named.includes(x))) expect(series['gpumem/forecast_warning']![row]).toBe(0);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 180_000);
