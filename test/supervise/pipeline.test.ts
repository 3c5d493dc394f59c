import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { isGpumemError } from '../../src/core/index.js';
import { parsePipeline, runPipeline, splitCommand } from '../../src/supervise/index.js';
import { GiB, PROCS, claimsSource, sink, tempDir } from './helpers/claims.js';
import { runs } from '../helpers/fuzz.js';

const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

describe('pipeline file', () => {
  it('parses the example: string and list commands, defaults inherited, stage overrides', () => {
    const spec = parsePipeline(readFileSync(join(__dirname, '../../examples/pipeline.yaml'), 'utf8'), 'pipeline.yaml');
    expect(spec.stages.map((s) => s.name)).toEqual(['train', 'test', 'eval']);
    expect(spec.stages[0]).toMatchObject({ batch: 16, accum: 1, retryOom: 3, gpus: '0', env: { OMP_NUM_THREADS: '8' } });
    expect(spec.stages[0]?.argv).toEqual(['python', 'train.py', '--config', 'configs/seg.yaml', '--batch-size', '{batch}', '--grad-accum', '{accum}']);
    expect(spec.stages[2]).toMatchObject({ retryOom: 0, env: { OMP_NUM_THREADS: '8', EVAL_SPLIT: 'val' } });
    expect(spec.toleranceBytes).toBe(256 * 1024 * 1024);
  });

  it('reports every problem with its line and field before anything runs', () => {
    const text = ['gpus: "0"', 'stages:', '  - name: train', '    command: python t.py --bs {batch}', '    batch: 0', '    colour: red',
      '  - name: train', "    command: python 'unclosed", '  - command: []'].join('\n');
    let message = '';
    try {
      parsePipeline(text, 'p.yaml');
    } catch (error) {
      expect(isGpumemError(error) && error.code).toBe('INPUT_MALFORMED');
      message = (error as Error).message;
    }
    expect(message).toContain('p.yaml:5: stages[0].batch: must be a whole number ≥ 1');
    expect(message).toContain('p.yaml:6: stages[0].colour: unknown field');
    expect(message).toContain('p.yaml:4: stages[0].command: uses {batch}/{accum} but the stage has no batch');
    expect(message).toContain('p.yaml:7: stages[1].name: "train" is used by an earlier stage');
    expect(message).toContain('p.yaml:8: stages[1].command: has an unclosed quote');
    expect(message).toContain('p.yaml:9: stages[2].name: is required');
    expect(message).toContain('p.yaml:9: stages[2].command: is empty');
  });

  it('splits commands with quotes and escapes, without a shell', () => {
    expect(splitCommand(`python "my script.py" --tag 'a b' x\\ y`)).toEqual(['python', 'my script.py', '--tag', 'a b', 'x y']);
    expect(splitCommand('a ""')).toEqual(['a', '']);
    expect(splitCommand('a "b')).toBeNull();
  });

  it('names the line of a YAML syntax error', () => {
    expect(() => parsePipeline('stages:\n  - name: a\n    command: "open', 'q.yaml')).toThrow(/^q\.yaml:3: /);
  });

  it('reports only the first YAML syntax error, not the cascade after it', () => {
    const text = readFileSync(new URL('../../examples/doctor-example.ndjson', import.meta.url), 'utf8');
    try {
      parsePipeline(text, 'x.ndjson');
      expect.unreachable();
    } catch (error) {
      expect(isGpumemError(error) && error.message).toMatch(/^x\.ndjson:\d+: [^;]+$/);
    }
  });

  it('never throws anything but a GpumemError, whatever the text', () => {
    fc.assert(fc.property(fc.oneof(fc.string(), fc.string().map((s) => `stages:\n  - name: ${s}\n    command: ${s}\n    batch: ${s}`)), (text) => {
      try {
        parsePipeline(text, 'f.yaml');
      } catch (error) {
        expect(isGpumemError(error)).toBe(true);
      }
    }), { numRuns: runs(300) });
  });
});

describe('runPipeline', () => {
  function setup(leak: number[] = [0]) {
    const tmp = tempDir('gpumem-pipe-');
    cleanups.push(tmp.remove);
    const extra = { leakBytes: leak };
    const source = claimsSource(tmp.dir, [{ totalBytes: 80 * GiB }], extra);
    const lines: string[] = [];
    const run = { env: { PATH: process.env.PATH, GPUMEM_TEST_CLAIMS: tmp.dir }, stdout: sink(), stderr: sink(), log: (l: string) => lines.push(l), intervalMs: 20, graceMs: 200, settleMs: 200, cleanupTimeoutMs: 1000 };
    return { tmp, source, lines, run, extra };
  }
  const yaml = (stages: string[]): string => `gpus: "0"\nstages:\n${stages.join('\n')}\n`;
  const stage = (name: string, args: string): string => `  - name: ${name}\n    command: ${process.execPath} ${PROCS}/worker-tree.mjs ${args}`;

  it('runs stages in order with the cleanup check passing between them, and resumes with --from', async () => {
    const t = setup();
    const spec = parsePipeline(yaml([stage('train', `--claim 0:${2 * GiB} --workers 2 --worker-claim 0:${GiB} --hold-ms 700`), stage('eval', `--claim 0:${GiB} --hold-ms 100`)]), 'p.yaml');
    const report = await runPipeline({ spec, file: 'p.yaml', source: t.source, toleranceBytes: 64 * 1024 * 1024, run: t.run, log: (l) => t.lines.push(l) });
    expect(report.status).toBe('ok');
    expect(report.stages.map((s) => [s.name, s.status, s.run?.peaks[0]?.peakBytes])).toEqual([['train', 'ok', 4 * GiB], ['eval', 'ok', GiB]]);
    expect(report.stages[0]?.check).toMatchObject({ passed: true, gpus: [{ index: 0, beforeBytes: 0, afterBytes: 0, deltaBytes: 0 }] });
    expect(t.lines.some((l) => l.startsWith('status GPU 0'))).toBe(true);
    const resumed = await runPipeline({ spec, file: 'p.yaml', source: t.source, toleranceBytes: 0, from: 'eval', run: t.run, log: () => {} });
    expect(resumed.stages.map((s) => s.status)).toEqual(['skipped', 'ok']);
    await expect(runPipeline({ spec, file: 'p.yaml', source: t.source, toleranceBytes: 0, from: 'nope', run: t.run, log: () => {} })).rejects.toThrow(/no stage "nope"/);
  });

  it('stops when memory is not back to the pre-stage level within the tolerance', async () => {
    const t = setup();
    const spec = parsePipeline(yaml([stage('train', '--hold-ms 50'), stage('eval', '--hold-ms 50')]), 'p.yaml');
    const report = await runPipeline({
      spec, file: 'p.yaml', source: t.source, toleranceBytes: 256 * 1024 * 1024, log: () => {},
      run: { ...t.run, plugins: [{ name: 'leak', onSpawn: () => void (t.extra.leakBytes[0] = GiB) }] },
    });
    expect(report.status).toBe('failed');
    expect(report.stages.map((s) => s.status)).toEqual(['cleanup-failed', 'not-run']);
    expect(report.stages[0]?.check?.reason).toBe('GPU 0: 1.00 GiB more used than before the stage (tolerance 256.00 MiB)');
  });

  it('stops at a failed stage and carries its exit code', async () => {
    const t = setup();
    const spec = parsePipeline(yaml([stage('train', '--hold-ms 10 --exit 4'), stage('eval', '--hold-ms 10')]), 'p.yaml');
    const report = await runPipeline({ spec, file: 'p.yaml', source: t.source, toleranceBytes: 0, run: t.run, log: () => {} });
    expect(report.stages.map((s) => s.status)).toEqual(['failed', 'not-run']);
    expect(report.exit).toEqual({ code: 4, signal: null });
  });

  it('refuses a stage naming a GPU that is not there before running the first stage', async () => {
    const t = setup();
    const file = join(t.tmp.dir, 'marker');
    const spec = parsePipeline(yaml([`  - name: a\n    command: touch ${file}`, '  - name: b\n    command: "true"\n    gpus: "3"']), 'p.yaml');
    await expect(runPipeline({ spec, file: 'p.yaml', source: t.source, toleranceBytes: 0, run: t.run, log: () => {} })).rejects.toThrow(/stage "b" \(line \d+\): --gpus: no GPU "3"/);
    expect(() => readFileSync(file)).toThrow();
    writeFileSync(file, '');
  });
});
