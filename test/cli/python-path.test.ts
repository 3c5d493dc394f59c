/** `gpumem python-path` end to end: the printed folder really makes `import gpumem_torch` work. */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gpumemInProcess } from '../helpers/cli.js';


async function gpumem(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const r = await gpumemInProcess(args);
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
}

describe('gpumem python-path', () => {
  it('prints the folder from which python imports gpumem_torch', async () => {
    const r = await gpumem('python-path');
    expect(r.status, r.stderr).toBe(0);
    const dir = r.stdout.trim();
    expect(existsSync(join(dir, 'gpumem_torch', '__init__.py'))).toBe(true);
    const py = spawnSync('python3', ['-c', 'import gpumem_torch, sys; print(gpumem_torch.__file__, "torch" in sys.modules)'], {
      encoding: 'utf8',
      env: { ...process.env, PYTHONPATH: dir },
    });
    expect(py.status, py.stderr).toBe(0);
    // Importing the API must not import torch (it is imported when a function is called).
    expect(py.stdout.trim()).toBe(`${join(dir, 'gpumem_torch', '__init__.py')} False`);
  });

  it('--site prints the sitecustomize folder; --json both, versioned', async () => {
    const site = await gpumem('python-path', '--site');
    expect(existsSync(join(site.stdout.trim(), 'sitecustomize.py'))).toBe(true);
    const json = JSON.parse((await gpumem('python-path', '--json')).stdout);
    expect(json).toEqual({ schemaVersion: 1, pythonPath: expect.any(String), sitePath: site.stdout.trim() });
  });
});
