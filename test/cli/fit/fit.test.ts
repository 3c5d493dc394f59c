import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../supervise/helpers/claims.js';
import { startPump } from '../../supervise/helpers/pump.js';
import { GiB } from '../../../src/core/units.js';
import { BIN } from '../../helpers/cli.js';

const TRAIN = join(__dirname, '../../fixtures/fit/fake-train.mjs');
const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

function gpumem(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

interface Report {
  schemaVersion: number;
  batch: number | null;
  targetBytes: number;
  freeBytesAtStart: number;
  runs: Array<{ batch: number; reason: string; ok: boolean; oom: boolean; peakBytes: number | null; fits: boolean }>;
  line: { fixedBytes: number; perSampleBytes: number } | null;
  measuredBytesPerSample: number | null;
  accumulation: { steps: number; microBatch: number } | null;
}

async function fit(curve: string[], extra: string[] = []): Promise<{ report: Report; code: number | null; stderr: string }> {
  const tmp = tempDir('gpumem-fit-');
  const pump = startPump(tmp.dir);
  cleanups.push(() => pump.stop(), tmp.remove);
  const r = await gpumem(['fit', '--gpus', '1', '--source', 'nvml', '--interval-ms', '15', '--steps', '3', '--json', ...extra, '--', process.execPath, TRAIN, '--batch', '{batch}', '--steps', '{steps}', '--gpu', '1', ...curve], pump.env);
  return { report: JSON.parse(r.stdout || 'null') as Report, code: r.code, stderr: r.stderr };
}

describe('gpumem fit (CLI, fake NVML driver, real processes)', () => {
  it('linear memory: 3 runs, the line recovers fixed and per-sample bytes, the answer is the true max', async () => {
    const { report, code } = await fit(['--fixed', String(2 * GiB), '--per', String(GiB)], ['--effective-batch', '256']);
    expect(code).toBe(0);
    expect(report.schemaVersion).toBe(2);
    expect(report.runs.map((r) => r.reason)).toEqual(['probe', 'probe', 'verify']);
    expect(report.line).toEqual({ fixedBytes: 2 * GiB, perSampleBytes: GiB });
    const truth = Math.floor((report.targetBytes - 2 * GiB) / GiB);
    expect(report.batch).toBe(truth);
    expect(report.runs.at(-1)).toMatchObject({ batch: truth, ok: true, peakBytes: 2 * GiB + truth * GiB });
    expect(report.measuredBytesPerSample).toBe(GiB);
    expect(report.accumulation!.steps * report.accumulation!.microBatch).toBeGreaterThanOrEqual(256);
  }, 30000);

  it('OOM below the line\'s prediction: bisects with real runs and reports only a batch that ran', async () => {
    const { report, code } = await fit(['--fixed', String(GiB), '--per', String(GiB / 2), '--oom-above', '40']);
    expect(code).toBe(0);
    expect(report.runs.some((r) => r.oom)).toBe(true);
    expect(report.batch).toBeLessThanOrEqual(40);
    expect(report.batch! / 40).toBeGreaterThanOrEqual(0.97);
    expect(report.runs.find((r) => r.batch === report.batch)).toMatchObject({ ok: true, fits: true });
  }, 60000);

  it('exits 1 when not even batch 1 fits, and 2 without a {batch} placeholder', async () => {
    const { report, code } = await fit(['--fixed', String(GiB), '--per', String(GiB), '--oom-above', '0']);
    expect(report.runs.map((r) => [r.batch, r.oom])).toEqual([[2, true], [1, true]]);
    expect(code).toBe(1);
    expect(report.batch).toBeNull();
    const tmp = tempDir('gpumem-fit-');
    cleanups.push(tmp.remove);
    const bad = await gpumem(['fit', '--', 'python', 'train.py'], {});
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('no {batch} placeholder');
  }, 30000);
});
