/** A reader that stops early (`gpumem status --watch | head`) ends gpumem quietly with status 0. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

it('exits 0 without an error when stdout is closed by the reader', async () => {
  const child = spawn(process.execPath, ['dist/cli/bin.js', 'status', '--replay', 'examples/doctor-example.ndjson', '--watch', '--interval', '50'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.stdout.destroy();
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  expect(stderr).not.toMatch(/internal error|EPIPE/);
  expect(code).toBe(0);
});
