/**
 * Step timing under `gpumem run` with no change to the program (fake torch, real processes): a loop whose
 * DataLoader sleeps a known time per batch and whose step sleeps another is measured, and the input-bound and
 * batch-override findings fire when the phases and sizes say so — and not otherwise.
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../../helpers/cli.js';
import { requireTestPython } from '../../setup/python-venv.js';
import { tempDir } from '../helpers/claims.js';
import { startPump } from '../helpers/pump.js';
import { dataLoaderLoop } from '../helpers/companion-e2e.js';

const ROOT = resolve(__dirname, '../../..');
const FAKE_TORCH = join(ROOT, 'test', 'python', 'fake_torch_versions', 'v2_11');

const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

interface Steps {
  steps: number; meanStepMs: number; dataWaitShare: number; samplesPerSec: number; tokensPerSec: number | null; batchSeen: number; batchAsked: number | null;
  loader: { numWorkers: number | null; pinMemory: boolean | null } | null;
}
interface Report { attempts: Array<{ findings: Array<{ id: string; title: string; fix: string }>; plugins: { companion: { processes: Array<{ steps: Steps | null }> } } }> }

function run(code: string, batch: number | null, python = 'python3'): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const tmp = tempDir('gpumem-steps-');
  const pump = startPump(tmp.dir, 1);
  cleanups.push(() => pump.stop(), tmp.remove);
  const env = {
    PATH: process.env.PATH ?? '', HOME: tmp.dir, XDG_DATA_HOME: join(tmp.dir, 'data'), XDG_RUNTIME_DIR: join(tmp.dir, 'runtime'),
    PYTHONDONTWRITEBYTECODE: '1', ...(python === 'python3' ? { PYTHONPATH: FAKE_TORCH } : {}), ...pump.env,
  };
  const child = spawn(process.execPath, [BIN, 'run', '--json', '--no-history', '--source', 'nvml', '--interval-ms', '50',
    ...(batch === null ? [] : ['--batch', String(batch)]), '--', python, '-c', code], { env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((r) => child.on('close', (status) => r({ code: status, stdout, stderr })));
}

describe('step timing under gpumem run (fake torch)', () => {
  it('30 ms data wait in 40 ms steps of 96 asked 128: input-bound and batch override, with the measured figures', async () => {
    const r = await run(dataLoaderLoop(30, 10, 96), 128);
    expect(r.code, r.stderr).toBe(0);
    const attempt = (JSON.parse(r.stdout) as Report).attempts[0];
    const s = attempt?.plugins.companion.processes[0]?.steps as Steps;
    expect(s.steps).toBe(20);
    expect(s.batchSeen).toBe(96);
    expect(s.batchAsked).toBe(128);
    // Sleeps last at least what was asked and a loaded machine adds a little; the share is 0.75 by construction.
    expect(s.meanStepMs).toBeGreaterThanOrEqual(40);
    expect(s.meanStepMs).toBeLessThan(60);
    expect(s.dataWaitShare).toBeGreaterThan(0.6);
    expect(s.dataWaitShare).toBeLessThan(0.85);
    expect(s.samplesPerSec).toBeCloseTo((96 * 1000) / s.meanStepMs, 6);
    const ids = attempt?.findings.map((f) => f.id);
    expect(ids).toEqual(['input-bound', 'batch-override']);
    expect(attempt?.findings[1]?.title).toMatch(/batch size asked 128, used 96$/);
  }, 40_000);

  it('2 ms data wait in 40 ms steps of the size asked: no step finding', async () => {
    const r = await run(dataLoaderLoop(2, 38, 128), 128);
    expect(r.code, r.stderr).toBe(0);
    const attempt = (JSON.parse(r.stdout) as Report).attempts[0];
    const s = attempt?.plugins.companion.processes[0]?.steps as Steps;
    expect(s.steps).toBe(20);
    expect(s.dataWaitShare).toBeLessThan(0.3);
    expect(s.batchSeen).toBe(128);
    expect(attempt?.findings.filter((f) => f.id === 'input-bound' || f.id === 'batch-override')).toEqual([]);
  }, 40_000);
});

describe('step timing under gpumem run (real torch on CPU)', () => {
  it('a real DataLoader over a Dataset whose __getitem__ sleeps: measured, input-bound and batch override', async () => {
    const python = requireTestPython();
    // 12 samples of 2 ms each per batch (about 24 ms of loading) against 5 ms of compute; batch 12 where 16 was asked.
    const code = [
      'import time, torch',
      'from torch.utils.data import DataLoader, Dataset',
      'class Slow(Dataset):',
      '    def __len__(self):',
      '        return 21 * 12',
      '    def __getitem__(self, i):',
      '        time.sleep(0.002)',
      '        return torch.ones(3), i % 2',
      'for x, y in DataLoader(Slow(), batch_size=12):',
      '    time.sleep(0.005)',
      '    (x * 2).sum()',
    ].join('\n');
    const r = await run(code, 16, python);
    expect(r.code, r.stderr).toBe(0);
    const attempt = (JSON.parse(r.stdout) as Report).attempts[0];
    const s = attempt?.plugins.companion.processes[0]?.steps as Steps;
    expect(s, r.stderr).toBeTruthy();
    expect(s.steps).toBe(20);
    expect(s.batchSeen).toBe(12);
    expect(s.batchAsked).toBe(16);
    expect(s.meanStepMs).toBeGreaterThanOrEqual(29);
    expect(s.dataWaitShare).toBeGreaterThan(0.5);
    expect(s.dataWaitShare).toBeLessThan(0.95);
    expect(attempt?.findings.map((f) => f.id)).toEqual(['input-bound', 'batch-override']);
    expect(attempt?.findings[1]?.title).toMatch(/batch size asked 16, used 12$/);
  }, 60_000);

  it('token ids in a dict batch give tokens/s: 12 sequences of 16 tokens per batch, so 16 × samples/s', async () => {
    const python = requireTestPython();
    const code = [
      'import time, torch',
      'from torch.utils.data import DataLoader, Dataset',
      'class Text(Dataset):',
      '    def __len__(self):',
      '        return 21 * 12',
      '    def __getitem__(self, i):',
      '        return {"input_ids": torch.randint(0, 100, (16,)), "labels": torch.tensor(i % 2)}',
      'for batch in DataLoader(Text(), batch_size=12):',
      '    time.sleep(0.005)',
    ].join('\n');
    const r = await run(code, null, python);
    expect(r.code, r.stderr).toBe(0);
    const s = (JSON.parse(r.stdout) as Report).attempts[0]?.plugins.companion.processes[0]?.steps as Steps;
    expect(s.steps).toBe(20);
    expect(s.batchSeen).toBe(12);
    expect(s.tokensPerSec).toBeCloseTo(16 * s.samplesPerSec, 6);
    // The real DataLoader's settings as its iterator holds them (no accelerator here, so pin_memory is off).
    expect(s.loader).toMatchObject({ numWorkers: 0, pinMemory: false });
  }, 60_000);
});
