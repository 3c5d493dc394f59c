/**
 * A tracer that cannot set itself up stops the program instead of letting it run untraced (which would train for
 * real and leave the estimate without a step): one error line naming the torch it met and why, a hint, exit 1.
 * The program imports a stand-in torch 1.13 (test/python/fake_torch_versions), which has no fake tensors.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../../helpers/run-process.js';
import { estimate, SCRIPTS } from './traced-helpers.js';

const SITE = join(__dirname, '../../../python/_site');

describe('estimate -- CMD when the tracer cannot start', () => {
  it('stops at the import of torch with one error line, a hint and exit 1', async () => {
    const r = await estimate(['--', 'python3', 'old_torch.py']);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^gpumem: error: tracing python3 old_torch\.py stopped: the tracer could not start with torch 1\.13\.1: \w+Error: /);
    expect(lines[1]).toMatch(/^hint: the program was stopped at its import of torch, before running untraced; /);
    expect(r.stderr).not.toContain('not active');
    expect(r.stdout).toBe('');
  });

  it('says the same in --json mode, on stderr, with nothing on stdout', async () => {
    const r = await estimate(['--json', '--', 'python3', 'old_torch.py']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the tracer could not start with torch 1\.13\.1/);
    expect(r.stdout).toBe('');
  });

  it('a tracer that cannot even be installed (its own package broken beside the sitecustomize) ends the program with one line', async () => {
    // A copy of gpumem's python/ folder whose gpumem_torch cannot be imported (a damaged install): another
    // gpumem_torch earlier on the path is not used (test/python/test_sitecustomize.py), so the damage must be ours.
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-broken-'));
    try {
      mkdirSync(join(dir, '_site'));
      copyFileSync(join(SITE, 'sitecustomize.py'), join(dir, '_site', 'sitecustomize.py'));
      mkdirSync(join(dir, 'gpumem_torch'));
      writeFileSync(join(dir, 'gpumem_torch', '__init__.py'), 'raise ImportError("a broken copy")\n');
      const env = { PATH: process.env.PATH ?? '', PYTHONPATH: join(dir, '_site'), GPUMEM_ESTIMATE_TRACE: join(dir, 'trace.ndjson') };
      const r = await runProcess('python3', [join(SCRIPTS, 'old_torch.py')], { env, encoding: 'utf8', timeout: 60_000 });
      expect(r.status).toBe(3);
      expect(r.stderr).toBe('gpumem estimate: the tracer could not be installed (ImportError: a broken copy)\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
