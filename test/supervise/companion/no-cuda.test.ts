/**
 * A training script whose torch has no CUDA, with the real torch of the .venv/ test environment on this
 * CPU machine: `gpumem run` says so once with the cause and claims no statistics rate or memory fraction;
 * the explicit API says "no CUDA device" instead of printing zeros. A run with CUDA (fake torch) is the
 * negative case: no such line.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { requireTestPython } from '../../setup/python-venv.js';
import { BIN } from '../../helpers/cli.js';
import { tempDir } from '../helpers/claims.js';
import { startPump } from '../helpers/pump.js';

const ROOT = resolve(__dirname, '../../..');
const PY = join(ROOT, 'python');
const FAKE_TORCH = join(ROOT, 'test', 'python', 'fake_torch_versions', 'v2_11');
const DRIVER_PRESENT = ['/proc/driver/nvidia/version', '/dev/nvidiactl', '/dev/dxg'].some((f) => existsSync(f));

const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

interface Result { code: number | null; stdout: string; stderr: string }

function spawnText(cmd: string, args: string[], env: Record<string, string>): Promise<Result> {
  const child = spawn(cmd, args, { env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((r) => child.on('close', (code) => r({ code, stdout, stderr })));
}

function environment(extra: Record<string, string> = {}): Record<string, string> {
  const tmp = tempDir('gpumem-no-cuda-');
  const pump = startPump(tmp.dir, 1);
  cleanups.push(() => pump.stop(), tmp.remove);
  return {
    PATH: process.env.PATH ?? '', HOME: tmp.dir, XDG_DATA_HOME: join(tmp.dir, 'data'), XDG_RUNTIME_DIR: join(tmp.dir, 'runtime'),
    PYTHONDONTWRITEBYTECODE: '1', ...pump.env, ...extra,
  };
}

const TRAIN_ON_CPU = 'import torch\nx = torch.ones(64, 64)\nprint("sum", float((x @ x).sum()))\n';

interface Report { attempts: Array<{ plugins: { companion?: { processes: Array<{ pid: number; noCuda?: string | null }> } } }> }

describe('no CUDA in the child (real torch on CPU)', () => {
  it('CUDA_VISIBLE_DEVICES empty: the hello line and the report say so once, no rate or fraction claimed', async () => {
    const python = requireTestPython();
    const env = environment({ CUDA_VISIBLE_DEVICES: '' });
    const r = await spawnText(process.execPath, [BIN, 'run', '--no-history', '--source', 'nvml', '--interval-ms', '20',
      '--memory-fraction', '0.5', '--', python, '-c', TRAIN_ON_CPU], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('sum 262144.0');
    const hello = r.stderr.split('\n').filter((l) => l.includes('gpumem: companion: pid'));
    expect(hello, r.stderr).toHaveLength(1);
    expect(hello[0]).toMatch(/runs torch 2\.15\.0\S* with no CUDA device: CUDA_VISIBLE_DEVICES='' hides every GPU/);
    expect(hello[0]).toContain('memory fraction 0.5 not applied');
    expect(r.stderr).not.toMatch(/statistics at [\d.]+ Hz/);
    const report = r.stderr.split('\n').filter((l) => l.includes('no CUDA device in pid'));
    expect(report, r.stderr).toHaveLength(1);
    expect(report[0]).toContain("CUDA_VISIBLE_DEVICES='' hides every GPU");
  }, 60_000);

  it('no driver on this machine: the cause is found without CUDA_VISIBLE_DEVICES and lands in the JSON report', async () => {
    const python = requireTestPython();
    const r = await spawnText(process.execPath, [BIN, 'run', '--json', '--no-history', '--source', 'nvml', '--interval-ms', '20',
      '--', python, '-c', TRAIN_ON_CPU], environment());
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    const processes = report.attempts[0]?.plugins.companion?.processes ?? [];
    expect(processes).toHaveLength(1);
    // This machine has no GPU: either no driver files (found at import), or torch's own answer at exit.
    expect(processes[0]?.noCuda).toMatch(DRIVER_PRESENT ? /is_available\(\) is False/ : /no NVIDIA driver is loaded/);
  }, 60_000);

  it('with CUDA (fake torch) there is no such line, and statistics are announced', async () => {
    const env = environment({ PYTHONPATH: FAKE_TORCH });
    const r = await spawnText(process.execPath, [BIN, 'run', '--no-history', '--source', 'nvml', '--interval-ms', '20',
      '--companion-rate', '50', '--', 'python3', '-c', 'import torch\nx = torch.empty(1024, device="cuda")\n'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/companion: pid \d+ runs torch 2\.11\.0; PyTorch statistics at 50 Hz/);
    expect(r.stderr).not.toContain('no CUDA device');
  }, 60_000);

  it('the explicit API prints "no CUDA device" with the cause instead of zeros', async () => {
    const python = requireTestPython();
    const code = [
      'import gpumem_torch as gm',
      'gm.print_memory_info("start")',
      'with gm.track_memory("block"):',
      '    pass',
      'info = gm.memory_info()',
      'print("values", info["allocated_bytes"], info["total_bytes"])',
      'print("freed", gm.clear_cuda_memory())',
      'try:\n    gm.set_memory_fraction(0.5)\nexcept RuntimeError as e:\n    print("refused", e)',
    ].join('\n');
    const r = await spawnText(python, ['-c', code], { PATH: process.env.PATH ?? '', PYTHONPATH: PY, CUDA_VISIBLE_DEVICES: '' });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe("[gpumem] start no CUDA device: CUDA_VISIBLE_DEVICES='' hides every GPU from the program; unset it or name a GPU");
    expect(lines[1]).toMatch(/^\[gpumem\] block: no CUDA device: CUDA_VISIBLE_DEVICES='' hides every GPU/);
    expect(lines[2]).toBe('values None None');
    expect(lines[3]).toBe('freed 0');
    expect(lines[4]).toMatch(/^refused gpumem: memory fraction not set, no CUDA device: CUDA_VISIBLE_DEVICES='' hides/);
    expect(r.stdout).not.toContain('0 B');
  }, 60_000);
});
