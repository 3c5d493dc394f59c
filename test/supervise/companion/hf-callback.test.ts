/**
 * gpumem_torch's Hugging Face callback in a real Trainer on the CPU (.venv: torch, transformers): its figures are
 * logged through the Trainer's own logging — in the log history saved to trainer_state.json and in the lines the
 * Trainer prints — at every logging step and only there; the times match a dataset that sleeps 3 ms per item.
 * On the CPU there is no allocator to read, so no memory figure may appear. With `report_to=["tensorboard"]` the
 * same figures are in the event files the Trainer's TensorBoard callback wrote (read back with tensorboard's reader).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { requireTestPython } from '../../setup/python-venv.js';
import { companionSetup, gpumem } from '../helpers/companion-e2e.js';
import { runProcess } from '../../helpers/run-process.js';

const ROOT = resolve(__dirname, '../../..');

interface Logged { history: Array<Record<string, number>>; printed: string[]; tensorboard: Record<string, Record<string, number>> }

async function runTrainer(python: string, dir: string, ...extra: string[]): Promise<Logged> {
  const r = await runProcess(python, [join(ROOT, 'test/python/scripts/hf_trainer_cpu.py'), dir, ...extra], {
    encoding: 'utf8', env: { ...process.env, PYTHONPATH: join(ROOT, 'python'), PYTHONDONTWRITEBYTECODE: '1' }, timeout: 120_000, maxBuffer: 1 << 26,
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string) as Logged;
}

function stepEntries(out: Logged): Array<Record<string, number>> {
  const steps = out.history.filter((e) => 'loss' in e);
  expect(steps.map((e) => e.step)).toEqual([5, 10, 15, 20, 25, 30]);
  for (const e of steps) {
    // Four items of 3 ms each are loaded per step: the wait is at least that, and the step at least its wait.
    expect(e['gpumem/data_wait_ms']).toBeGreaterThanOrEqual(12);
    expect(e['gpumem/step_ms']).toBeGreaterThanOrEqual(e['gpumem/data_wait_ms'] as number);
    expect(Object.keys(e).filter((k) => k.startsWith('gpumem/')).sort()).toEqual(['gpumem/data_wait_ms', 'gpumem/step_ms']);
  }
  return steps;
}

it('a real Trainer logs gpumem/step_ms and gpumem/data_wait_ms at each logging step, read back from its files', async () => {
  const python = requireTestPython();
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-hf-'));
  try {
    const out = await runTrainer(python, dir);
    stepEntries(out);
    expect(out.tensorboard).toEqual({}); // report_to=[]: no event file
    // The end-of-training summary is no step: nothing of ours in it.
    expect(Object.keys(out.history[out.history.length - 1] ?? {}).filter((k) => k.startsWith('gpumem/'))).toEqual([]);
    expect(out.printed.filter((l) => l.includes("'gpumem/step_ms'"))).toHaveLength(6);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 150_000);

it('with report_to=["tensorboard"] the event files hold the callback\'s figures at each logging step', async () => {
  const python = requireTestPython();
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-hf-tb-'));
  try {
    const out = await runTrainer(python, dir, 'tensorboard');
    const steps = stepEntries(out);
    const tags = Object.keys(out.tensorboard);
    // The TensorBoard callback prefixes training logs with train/; ours are among them, and only these two on the CPU.
    expect(tags.filter((t) => t.includes('gpumem/')).sort()).toEqual(['train/gpumem/data_wait_ms', 'train/gpumem/step_ms']);
    for (const name of ['gpumem/step_ms', 'gpumem/data_wait_ms']) {
      // TensorBoard keeps 32-bit floats: the history's value, rounded to one, at the same step.
      const expected = Object.fromEntries(steps.map((e) => [String(e.step), Math.fround(e[name] as number)]));
      expect(out.tensorboard[`train/${name}`]).toEqual(expected);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 150_000);

it('under gpumem run the callback reads the step timing of the companion: the same figures, one DataLoader wrapper', async () => {
  const python = requireTestPython();
  const cleanups: Array<() => void> = [];
  try {
    const { dir, env } = companionSetup(cleanups);
    const out = join(dir, 'trainer');
    const r = await gpumem(['run', '--no-history', '--source', 'nvml', '--', python, join(ROOT, 'test/python/scripts/hf_trainer_cpu.py'), out],
      { ...env, PYTHONPATH: join(ROOT, 'python') });
    expect(r.code, r.stderr).toBe(0);
    // The companion announced itself in the trainer's process. A second recorder of the callback's own would get no
    // fetch (the DataLoader is wrapped once), so data_wait_ms below is there only if the companion's was read.
    expect(r.stderr).toMatch(/companion: pid \d+ runs torch 2\.\d+.* with no CUDA device/);
    stepEntries(JSON.parse(r.stdout.trim().split('\n').pop() as string) as Logged);
  } finally {
    cleanups.forEach((f) => f());
  }
}, 150_000);
