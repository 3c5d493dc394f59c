/**
 * A pipeline whose stage ran fine but failed the cleanup check between stages (memory on its GPU not back
 * to the pre-stage level): the history must keep that outcome — not "ok" — with the check's verdict in
 * `runs show`, and list the pipeline itself with its stages linked, in `gpumem runs` and on serve's Runs page.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GiB } from '../supervise/helpers/claims.js';
import { startHarness } from '../server/harness.js';
import { expectNoLostRecords } from './harness.js';
import { expectClean, gpumem, type World, world } from './supervise-helpers.js';

let w: World | null = null;
const stray: Array<{ kill: (s: NodeJS.Signals) => boolean }> = [];
afterEach(() => {
  for (const c of stray.splice(0)) c.kill('SIGKILL');
  w?.remove();
  w = null;
});

describe('pipeline history: a stage whose cleanup check failed', () => {
  it('is stored as cleanup-failed with its exit code and verdict, under a pipeline row that links its stages', async () => {
    w = world();
    // A process outside the run; the stage makes it appear to hold 2 GiB on GPU 1 (the fake driver's claims).
    const outsider = spawn('/bin/sleep', ['60'], { stdio: 'ignore' });
    stray.push(outsider);
    const file = join(w.dir, 'p.yaml');
    writeFileSync(file, [
      'name: leaky',
      'gpus: "1"',
      'tolerance: 64MiB',
      'stages:',
      '  - name: train',
      `    command: [sh, -c, 'printf ${2 * GiB} > "$GPUMEM_TEST_CLAIMS/${outsider.pid}-1"; sleep 0.3']`,
      '  - name: eval',
      '    command: "true"',
      '',
    ].join('\n'));
    const r = await gpumem(['pipeline', '--db', w.db, '--no-companion', file], w.env, 30000);
    expectClean(r, 'pipeline with a failing cleanup check');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cleanup check after "train" failed/);

    const list = await gpumem(['runs', '--json', '--db', w.db], w.env);
    const doc = JSON.parse(list.stdout) as {
      runs: Array<{ id: number; stage: string; status: string; exitCode: number; pipelineId: number }>;
      pipelines?: Array<{ id: number; name: string; status: string; stages: Array<{ runId: number; stage: string; status: string }> }>;
    };
    const train = doc.runs.find((x) => x.stage === 'train')!;
    if (train.status === 'ok') throw new Error('LOST RECORD: the stage whose cleanup check failed is stored as "ok"');
    expect(train).toMatchObject({ status: 'cleanup-failed', exitCode: 0 });
    expectNoLostRecords(doc.pipelines?.length ?? 0, 1, 'pipeline rows');
    expect(doc.pipelines![0]).toMatchObject({ name: 'leaky', status: 'failed', stages: [{ runId: train.id, stage: 'train', status: 'cleanup-failed' }] });

    const show = await gpumem(['runs', 'show', String(train.id), '--db', w.db], w.env);
    expect(show.stdout).toContain('exit 0, cleanup failed');
    expect(show.stdout).toMatch(/cleanup check between stages: FAILED — GPU 1: 2\.00 GiB more used than before the stage/);
    const table = await gpumem(['runs', '--db', w.db], w.env);
    expect(table.stdout).toMatch(/^\s+\d+ .* failed +\d+: train cleanup-failed +leaky$/m);

    const h = await startHarness({ dbPath: w.db });
    try {
      const page = (await (await fetch(`${h.base}/api/v1/page/runs`)).json()) as {
        runs: Array<{ id: number; status: string; command: string }>;
        pipelines?: Array<{ name: string; status: string; stages: Array<{ runId: number; status: string }> }>;
      };
      expect(page.runs.find((x) => x.id === train.id)).toMatchObject({ status: 'cleanup-failed 0', command: expect.stringContaining('[pipeline ') });
      expect(page.pipelines).toEqual([expect.objectContaining({ name: 'leaky', status: 'failed', stages: [{ runId: train.id, stage: 'train', status: 'cleanup-failed' }] })]);
    } finally {
      await h.close();
    }
  }, 60000);
});
