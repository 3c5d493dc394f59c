/**
 * `gpumem estimate --world-size 2`: one rank traced at a time on PyTorch's fake process group, checked against the
 * bytes the same step allocates on two real ranks (torchrun, gloo, the CPU allocator seen by the profiler;
 * test/python/scripts/world_step.py). Both build the model on their device, so the same storages are counted.
 *
 * The ground truth comes from the profiler's allocation events of each rank's main thread. gloo's worker threads
 * sometimes drop the last reference to a buffer, and such a free is not reported, which can only make a rank's
 * figure larger: the smallest of four ranks' peaks (two runs) is the truth. Tolerance 1 KiB (the host-side scalars a CPU
 * run keeps that the traced GPU does not: the loss, the optimizer's step counters).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireOldTorchPython, requireTestPython } from '../../setup/python-venv.js';
import { estimate, TIMEOUT_MS, type Traced } from './traced-helpers.js';

const SCRIPT = join(__dirname, '../../python/scripts/world_step.py');
const TOLERANCE = 1024;

interface WorldTraced extends Traced {
  schemaVersion: number;
  worldSize: number;
  largestRank: number | null;
  ranks: Array<{ ranks: number[]; tracedRank: number; peakRequestedBytes: number; nvidiaSmiBytes: number }>;
  phasePeaks: Array<{ phase: string; peakRequestedBytes: number }>;
}

interface Truth { peakBytes: number; forwardPeakBytes: number }

function truthRun(args: string[]): Promise<Truth> {
  return new Promise((resolve, reject) => {
    const child = spawn(requireTestPython(), ['-m', 'torch.distributed.run', '--standalone', '--nproc-per-node', '2', SCRIPT, ...args, '--steps', '1'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', OMP_NUM_THREADS: '1' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => {
      const ranks = [...out.matchAll(/truth (\{[^{}]*\})/g)].map((m) => JSON.parse(m[1] as string) as Truth);
      if (code !== 0 || ranks.length !== 2) reject(new Error(`torchrun exited ${String(code)} with ${ranks.length} truth lines:\n${err.slice(-2000)}`));
      else resolve({ peakBytes: Math.min(...ranks.map((r) => r.peakBytes)), forwardPeakBytes: Math.min(...ranks.map((r) => r.forwardPeakBytes)) });
    });
  });
}

async function tracedWorld(args: string[], steps = 1): Promise<WorldTraced> {
  const r = await estimate(['--json', '--world-size', '2', '--steps', String(steps), '--', requireTestPython(), SCRIPT, ...args, '--steps', String(steps + 1)]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as WorldTraced;
}

/**
 * Both figures of the traced rank against the truth: the step's peak, and the peak up to the end of the first
 * forward pass (what DDP and FSDP allocated when they wrapped the model, and the forward on top). The traced
 * figures count cuBLAS's workspace, which a CPU run has no part of.
 */
/** The smallest figures of four real ranks (two torchrun jobs): a lost free only ever adds. */
async function truthPeaks(args: string[]): Promise<Truth> {
  const runs = await Promise.all([truthRun(args), truthRun(args)]);
  return { peakBytes: Math.min(...runs.map((r) => r.peakBytes)), forwardPeakBytes: Math.min(...runs.map((r) => r.forwardPeakBytes)) };
}

async function expectTruth(args: string[], checkForward = true): Promise<WorldTraced> {
  const [report, truth] = await Promise.all([tracedWorld(args), truthPeaks(args)]);
  expect(report.schemaVersion).toBe(2);
  expect(report.ranks.map((r) => r.ranks)).toEqual([[0], [1]]);
  for (const rank of report.ranks) {
    const tensors = rank.peakRequestedBytes - report.workspaceBytes;
    expect(Math.abs(tensors - truth.peakBytes), `rank ${rank.tracedRank}: traced ${tensors}, truth ${truth.peakBytes}`).toBeLessThanOrEqual(TOLERANCE);
  }
  // The report is rank 0's (the ranks are alike). Up to the first forward's end it went through construction
  // (phase "other", before the first matmul adds the workspace) and the forward pass.
  const phase = (name: string): number => report.phasePeaks.find((p) => p.phase === name)?.peakRequestedBytes ?? 0;
  const forward = Math.max(phase('other'), phase('forward') - report.workspaceBytes);
  if (checkForward) expect(Math.abs(forward - truth.forwardPeakBytes), `forward: traced ${forward}, truth ${truth.forwardPeakBytes}`).toBeLessThanOrEqual(TOLERANCE);
  return report;
}

describe('gpumem estimate --world-size (fake process group) against two real gloo ranks', () => {
  it('DDP: the gradient bucket is counted from construction, once per rank', async () => {
    const report = await expectTruth(['ddp', '--batch', '64']);
    expect(report.notes.some((n) => n.includes("rank 0 of 2 traced on PyTorch's fake process group"))).toBe(true);
  }, TIMEOUT_MS);

  it('DDP with gradient_as_bucket_view: the gradients live in the bucket, one parameter copy less', async () => {
    const [view, plain] = await Promise.all([expectTruth(['ddp', '--grad-as-bucket-view', '--batch', '64']), tracedWorld(['ddp', '--batch', '64'])]);
    // 4 × Linear(512, 512) in fp32: the separate gradients DDP no longer keeps.
    expect(plain.peakRequestedBytes - view.peakRequestedBytes).toBe(4 * (512 * 512 + 512) * 4);
  }, TIMEOUT_MS);

  it('FSDP2 fully_shard in fp32 and with bf16 mixed precision: sharded parameters, states and gradients per rank', async () => {
    // In fp32 a real rank keeps the previous layer's all-gather output a little longer than the traced one
    // (docs/distributed.md): the forward figure differs by one layer, the step's peak (at the optimizer) does not.
    await expectTruth(['fsdp2'], false);
    const report = await expectTruth(['fsdp2', '--bf16']);
    // Each rank holds half of every parameter (fp32) and of the two AdamW states.
    expect(report.byCategory.weights).toBe((4 * (512 * 512 + 512) * 4) / 2);
  }, TIMEOUT_MS);

  it('a rank that keeps more is reported apart, and the report is that rank\'s', async () => {
    const report = await tracedWorld(['ddp', '--rank0-extra-mb', '8'], 2);
    const [rank0, others] = report.ranks;
    expect(rank0!.peakRequestedBytes - others!.peakRequestedBytes).toBe(8 << 20);
    expect(report.largestRank).toBe(0);
    expect(report.peakRequestedBytes).toBe(rank0!.peakRequestedBytes);
    const human = await estimate(['--world-size', '2', '--steps', '2', '--', requireTestPython(), SCRIPT, 'ddp', '--rank0-extra-mb', '8', '--steps', '3']);
    expect(human.stdout).toMatch(/\n {2}rank 0 +40\.19 MiB requested, .*\n {2}rank 1 +32\.19 MiB requested, /);
    expect(human.stdout).toMatch(/rank 0 (needs [\d.]+ MiB more in nvidia-smi|requests 8\.00 MiB more) than the others.*; the breakdown above is rank 0's/);
  }, TIMEOUT_MS);

  it('says in one line what cannot be traced: find_unused_parameters, a torch release not checked, no command', async () => {
    const unused = await estimate(['--world-size', '2', '--steps', '1', '--', requireTestPython(), SCRIPT, 'ddp', '--find-unused']);
    expect(unused.code).not.toBe(0);
    expect(unused.stderr).toMatch(/^gpumem: error: tracing .* as rank 0 of 2 stopped: NotImplementedError: DDP\(find_unused_parameters=True\) cannot be traced/);
    const old = await estimate(['--world-size', '2', '--', requireOldTorchPython(), SCRIPT, 'ddp']);
    expect(old.code).not.toBe(0);
    expect(old.stderr).toMatch(/--world-size: torch 2\.4\.\d+\S* is not a release the fake process group was checked on \(checked: 2\.15\)/);
    expect(old.stderr.split('\n').filter((l) => l !== '')).toHaveLength(2);
    const none = await estimate(['--world-size', '2', '--params', '7B']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--world-size traces the ranks of a training command');
  }, TIMEOUT_MS);
});
