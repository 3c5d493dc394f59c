/** `gpumem python-path` end to end: the printed folder really makes `import gpumem_torch` work. */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const BIN = resolve(__dirname, '../../dist/cli/bin.js');

function gpumem(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('node', [BIN, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('gpumem python-path', () => {
  it('prints the folder from which python imports gpumem_torch', () => {
    const r = gpumem('python-path');
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

  it('--site prints the sitecustomize folder; --json both, versioned', () => {
    const site = gpumem('python-path', '--site');
    expect(existsSync(join(site.stdout.trim(), 'sitecustomize.py'))).toBe(true);
    const json = JSON.parse(gpumem('python-path', '--json').stdout);
    expect(json).toEqual({ schemaVersion: 1, pythonPath: expect.any(String), sitePath: site.stdout.trim() });
  });
});
