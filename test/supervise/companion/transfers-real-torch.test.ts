/**
 * The companion's copy and synchronisation wrappers on real torch (CPU build): the API shape — every call
 * form of `.to`, `.item`, `.tolist`, `.cpu` and `Module.to` returns what it returned before wrapping, errors
 * pass through, CPU calls count nothing — and `torch.compile` traces through the wrappers in one frame.
 */
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireTestPython } from '../../setup/python-venv.js';
import { runProcess } from '../../helpers/run-process.js';

const ROOT = resolve(__dirname, '../../..');

describe('copy and synchronisation wrappers on real torch (CPU)', () => {
  it('keep every call shape, count no CPU call, and do not make torch.compile recompile', async () => {
    const python = requireTestPython();
    const r = await runProcess(python, [join(ROOT, 'test', 'python', 'real_torch_transfers.py')], {
      encoding: 'utf8', timeout: 120_000, env: { ...process.env, PYTHONPATH: join(ROOT, 'python'), PYTHONDONTWRITEBYTECODE: '1' },
    });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, unknown> & { before: Record<string, unknown> };
    expect(out.wrapped).toBe(true);
    expect(out.after).toEqual(out.before);
    expect(out.before).toMatchObject({ toDtype: 'torch.float64', toOther: 'torch.float16', item: 15, cpuIsSelf: true, module: 'torch.float64' });
    expect(out.cudaError).toBe('RuntimeError');
    expect(out.copies).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(out.syncs).toEqual({});
    expect(out.frames).toBe(1);
    expect(out.compiled).toEqual(Array.from({ length: 5 }, () => [2, 2, 2]));
  }, 150_000);
});
