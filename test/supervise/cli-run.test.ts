import { spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GiB, PROCS, alive, readClaims, tempDir } from './helpers/claims.js';
import { startPump } from './helpers/pump.js';
import { BIN } from '../helpers/cli.js';

const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

interface Result { code: number | null; stdout: string; stderr: string }

function gpumem(args: string[], env: Record<string, string>, onStart?: (pid: number, out: () => string) => void): Promise<Result> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  onStart?.(child.pid as number, () => stdout + stderr);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

function setup() {
  const tmp = tempDir('gpumem-cli-run-');
  const pump = startPump(tmp.dir);
  cleanups.push(() => pump.stop(), tmp.remove);
  return { dir: tmp.dir, pump, db: join(tmp.dir, 'history.db') };
}

const node = (script: string, ...args: string[]): string[] => [process.execPath, join(PROCS, script), ...args];

describe('gpumem run (CLI, fake NVML driver, real processes)', () => {
  it('reports the tree peak through the real NVML binding and stores the run in the history', async () => {
    const t = setup();
    const r = await gpumem(['run', '--gpus', '1', '--db', t.db, '--json', '--source', 'nvml', '--interval-ms', '20', '--', ...node('worker-tree.mjs', '--workers', '2', '--claim', `1:${2 * GiB}`, '--worker-claim', `1:${GiB}`, '--hold-ms', '700')], t.pump.env);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { schemaVersion: number; runId: number; peaks: Array<{ index: number; peakBytes: number }>; env: Array<{ name: string; value: string }> };
    expect(report.schemaVersion).toBe(1);
    expect(report.peaks).toEqual([expect.objectContaining({ index: 1, peakBytes: 4 * GiB })]);
    expect(report.env.find((d) => d.name === 'CUDA_VISIBLE_DEVICES')?.value).toBe('GPU-00000000-0000-4000-8000-000000000001');
    // The child's stdout went to stderr so that stdout is only JSON.
    expect(r.stderr).toContain('CUDA_VISIBLE_DEVICES=GPU-00000000-0000-4000-8000-000000000001');
    const list = await gpumem(['runs', '--db', t.db, '--json'], {});
    const runs = (JSON.parse(list.stdout) as { runs: Array<{ id: number; peakBytes: number; status: string }> }).runs;
    expect(runs).toEqual([expect.objectContaining({ id: report.runId, peakBytes: 4 * GiB, status: 'ok' })]);
    const show = await gpumem(['runs', 'show', String(report.runId), '--db', t.db], {});
    expect(show.stdout).toContain('GPU 1 peak 4.00 GiB');
  });

  it('passes the child\'s exit code on, and refuses an unknown GPU with the list present (exit 2)', async () => {
    const t = setup();
    const failed = await gpumem(['run', '--db', t.db, '--', ...node('worker-tree.mjs', '--hold-ms', '10', '--exit', '3')], t.pump.env);
    expect(failed.code).toBe(3);
    expect(failed.stderr).toContain('gpumem run: exit 3');
    const bad = await gpumem(['run', '--gpus', '7', '--no-history', '--', 'true'], t.pump.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/no GPU "7".*\nhint: GPUs present: 0 \(GPU-[^)]*NVIDIA H100 80GB HBM3\); 1 /);
  });

  it("forwards Ctrl-C to the child's process group, passes its exit status on and leaves no worker behind", async () => {
    const t = setup();
    let gpumemPid = 0;
    let output = (): string => '';
    const running = gpumem(['run', '--no-history', '--grace-ms', '300', '--', ...node('worker-tree.mjs', '--workers', '2', '--worker-mode', 'orphan', '--worker-claim', `0:${GiB}`, '--hold-ms', '20000', '--int-exit', '-1')], t.pump.env, (pid, out) => {
      gpumemPid = pid;
      output = out;
    });
    const end = Date.now() + 10000;
    const workerFiles = (): string[] => readdirSync(t.dir).filter((n) => /^\d+-0$/.test(n));
    while ((!output().includes('started 2 workers') || workerFiles().length < 2) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    process.kill(gpumemPid, 'SIGINT');
    const r = await running;
    expect(r.stdout).toContain('parent got SIGINT');
    // worker-tree exits with 255 on --int-exit -1; gpumem passes it on.
    expect(r.code).toBe(255);
    // The workers are in the child's process group, so the forwarded SIGINT reached them too.
    expect(workerFiles()).toHaveLength(2);
    for (const name of workerFiles()) expect(alive(Number(name.split('-')[0]))).toBe(false);
    expect(readClaims(t.dir)).toEqual([]);
  });

  it('exits 128+n when the child is killed by signal n', async () => {
    const t = setup();
    const r = await gpumem(['run', '--no-history', '--', ...node('worker-tree.mjs', '--hold-ms', '10', '--crash', '1')], t.pump.env);
    expect(r.code).toBe(128 + 11);
  });

  it('runs a pipeline file end to end, stores each stage, and rejects a bad file before running anything', async () => {
    const t = setup();
    const file = join(t.dir, 'p.yaml');
    const stage = (name: string, args: string): string => `  - name: ${name}\n    command: ${process.execPath} ${join(PROCS, 'worker-tree.mjs')} ${args}`;
    writeFileSync(file, `gpus: "0"\nstages:\n${stage('train', `--claim 0:${3 * GiB} --hold-ms 300`)}\n${stage('eval', `--claim 0:${GiB} --hold-ms 200`)}\n`);
    const r = await gpumem(['pipeline', file, '--db', t.db, '--source', 'nvml', '--json'], t.pump.env);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { status: string; stages: Array<{ name: string; status: string; run: { peaks: Array<{ peakBytes: number }> } }> };
    expect(report.stages.map((s) => [s.name, s.status, s.run.peaks[0]?.peakBytes])).toEqual([['train', 'ok', 3 * GiB], ['eval', 'ok', GiB]]);
    const runs = JSON.parse((await gpumem(['runs', '--db', t.db, '--json'], {})).stdout) as { runs: Array<{ stage: string; pipelineId: number }> };
    expect(runs.runs.map((x) => x.stage)).toEqual(['eval', 'train']);
    writeFileSync(file, `stages:\n  - name: a\n    command: touch ${join(t.dir, 'ran')}\n  - name: b\n`);
    const bad = await gpumem(['pipeline', file, '--no-history'], t.pump.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('p.yaml:4: stages[1].command: is required');
    expect(existsSync(join(t.dir, 'ran'))).toBe(false);
  });

  it('gpumem runs only reads: a history that does not exist lists nothing and is not created', async () => {
    const tmp = tempDir('gpumem-cli-runs-');
    cleanups.push(tmp.remove);
    const db = join(tmp.dir, 'no', 'such', 'history.db');
    const list = await gpumem(['runs', '--db', db], {});
    expect(list).toMatchObject({ code: 0, stdout: 'no runs recorded yet (gpumem run -- CMD records one)\n' });
    expect(JSON.parse((await gpumem(['runs', '--db', db, '--json'], {})).stdout)).toEqual({ schemaVersion: 1, runs: [], pipelines: [] });
    const show = await gpumem(['runs', 'show', '1', '--db', db], {});
    expect(show.code).toBe(2);
    expect(show.stderr).toMatch(/^gpumem: error: no run 1 in the history\nhint: /);
    expect(existsSync(join(tmp.dir, 'no'))).toBe(false);
    const zero = await gpumem(['runs', '--limit', '0', '--db', db], {});
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/^gpumem: error: --limit: "0" must be a whole number of at least 1\nhint: /);
  });
});
