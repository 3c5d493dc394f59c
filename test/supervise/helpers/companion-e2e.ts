/**
 * Running the real CLI against the fake NVML driver with the fake torch: the environment (claims pumped into
 * the scenario, fake torch on PYTHONPATH, private XDG folders) and a child that collects its output.
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { BIN } from '../../helpers/cli.js';
import { tempDir } from './claims.js';
import { startPump } from './pump.js';

export const PY = resolve(__dirname, '../../python');

export interface CliResult { code: number | null; stdout: string; stderr: string }

/** Runs `gpumem ARGS…`; `onStart` gets a reader of the output so far. */
export function gpumem(args: string[], env: Record<string, string>, onStart?: (out: () => string) => void): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], { env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  onStart?.(() => stdout + stderr);
  return new Promise((r) => child.on('close', (code) => r({ code, stdout, stderr })));
}

/** The environment gpumem runs with; what must be undone afterwards is pushed onto `cleanups`. */
export function companionSetup(cleanups: Array<() => void>): { dir: string; env: Record<string, string> } {
  const tmp = tempDir('gpumem-companion-e2e-');
  const pump = startPump(tmp.dir, 2);
  cleanups.push(() => pump.stop(), tmp.remove);
  const env = {
    PATH: process.env.PATH ?? '', HOME: tmp.dir, XDG_DATA_HOME: join(tmp.dir, 'data'), XDG_RUNTIME_DIR: join(tmp.dir, 'runtime'),
    PYTHONPATH: join(PY, 'fake_torch_versions', 'v2_11'), PYTHONDONTWRITEBYTECODE: '1', ...pump.env,
  };
  return { dir: tmp.dir, env };
}

/** A training loop for the fake torch: `waitMs` inside the DataLoader per batch of `size` (21 batches), then `computeMs` of step. */
export function dataLoaderLoop(waitMs: number, computeMs: number, size: number): string {
  return [
    'import time, torch',
    'class Batch:',
    `    shape = (${size}, 3)`,
    'def batches():',
    '    for _ in range(21):',
    `        time.sleep(${waitMs / 1000})`,
    '        yield (Batch(), None)',
    'for x, y in torch.utils.data.DataLoader(batches(), batch_size=128):',
    `    time.sleep(${computeMs / 1000})`,
  ].join('\n');
}
