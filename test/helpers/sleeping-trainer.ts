/**
 * A scratch folder and a sleeping process standing in for a trainer (its real pid goes into a fake-driver
 * scenario), both removed after the file's tests.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

export function sleepingTrainer(prefix: string): { dir: string; pid: number } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const trainer = spawn('/bin/sleep', ['60'], { stdio: 'ignore' });
  afterAll(() => {
    trainer.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, pid: trainer.pid as number };
}
