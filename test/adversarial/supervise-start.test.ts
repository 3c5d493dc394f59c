/**
 * Faults before the program runs: a mistyped or non-executable command, and `--gpus` values that must be
 * refused before anything is recorded. Real gpumem processes, fake NVML driver, each bounded in time.
 */
import { chmodSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expectClean, gpumem, world, type World } from './supervise-helpers.js';

let w: World | null = null;
afterEach(() => {
  w?.remove();
  w = null;
});

async function runsIn(db: string, env: Record<string, string>): Promise<Array<{ status: string }>> {
  const r = await gpumem(['runs', '--db', db, '--json'], env);
  if (r.code !== 0) return [];
  return (JSON.parse(r.stdout) as { runs: Array<{ status: string }> }).runs;
}

describe('supervise faults: the program cannot be started', () => {
  it('a mistyped command with the companion on exits 127 at once, leaks no socket folder and is recorded as not-started', async () => {
    w = world();
    const r = await gpumem(['run', '--db', w.db, '--', 'pyhton-not-a-program', 'train.py'], w.env, 10000);
    expectClean(r, 'gpumem run');
    expect(r.code).toBe(127);
    expect(r.stderr).toContain('cannot start "pyhton-not-a-program": ENOENT');
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
    // The companion's private socket folder lives under TMPDIR: nothing may be left there.
    expect(readdirSync(w.tmp).filter((n) => n.startsWith('gpumem-'))).toEqual([]);
    expect(await runsIn(w.db, w.env)).toEqual([expect.objectContaining({ status: 'not-started' })]);
  });

  it('a pipeline stage with a mistyped command ends the pipeline at once with 127; the stage is stored as not-started', async () => {
    w = world();
    const file = join(w.dir, 'p.yaml');
    writeFileSync(file, 'name: p\nstages:\n  - name: train\n    command: "pyhton-not-a-program train.py"\n  - name: eval\n    command: "true"\n');
    const r = await gpumem(['pipeline', file, '--db', w.db], w.env, 10000);
    expectClean(r, 'gpumem pipeline');
    expect(r.code).toBe(127);
    expect(readdirSync(w.tmp).filter((n) => n.startsWith('gpumem-'))).toEqual([]);
    expect(await runsIn(w.db, w.env)).toEqual([expect.objectContaining({ status: 'not-started' })]);
  });

  it('fit with a mistyped command stops after the first try with one error line, exit 127 like a shell', async () => {
    w = world();
    const r = await gpumem(['fit', '--', 'pyhton-not-a-program', 'train.py', '--bs', '{batch}'], w.env, 10000);
    expectClean(r, 'gpumem fit');
    expect(r.code).toBe(127);
    expect(r.stderr.match(/cannot start "pyhton-not-a-program": ENOENT/g)).toHaveLength(1);
  });

  it('a file that is not executable exits 126 like a shell', async () => {
    w = world();
    const script = join(w.dir, 'train.sh');
    writeFileSync(script, '#!/bin/sh\necho hi\n');
    chmodSync(script, 0o644);
    const r = await gpumem(['run', '--no-history', '--', script], w.env, 10000);
    expectClean(r, 'gpumem run');
    expect(r.code).toBe(126);
    expect(r.stderr).toContain('EACCES');
  });
});

describe('supervise faults: --gpus usage errors are refused before anything is recorded', () => {
  for (const value of ['7', '2,2', '0,0', '-1', '1.5', '', '  ']) {
    it(`--gpus ${JSON.stringify(value)}: exit 2, one error line, no history row`, async () => {
      w = world();
      const r = await gpumem(['run', '--gpus', value, '--db', w.db, '--', 'true'], w.env, 10000);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^gpumem: error: --gpus/m);
      expect(r.stderr).toMatch(/GPUs present: 0 \(GPU-/);
      expect(await runsIn(w.db, w.env)).toEqual([]);
    });
  }

  it('a pipeline with a bad --gpus records no pipeline, and --check checks stage GPUs against the machine', async () => {
    w = world();
    const file = join(w.dir, 'p.yaml');
    writeFileSync(file, 'name: p\ngpus: "0"\nstages:\n  - name: train\n    command: "true"\n  - name: eval\n    command: "true"\n    gpus: "9"\n');
    const check = await gpumem(['pipeline', file, '--check'], w.env, 10000);
    expect(check.code).toBe(2);
    expect(check.stderr).toContain('no GPU "9"');
    const run = await gpumem(['pipeline', file, '--db', w.db], w.env, 10000);
    expect(run.code).toBe(2);
    expect(await runsIn(w.db, w.env)).toEqual([]);
    writeFileSync(file, 'name: p\nstages:\n  - name: train\n    command: "true"\n    gpus: "1"\n');
    const good = await gpumem(['pipeline', file, '--check'], w.env, 10000);
    expect(good.code).toBe(0);
    expect(good.stdout).toContain('GPUs checked against nvml');
  });
});
