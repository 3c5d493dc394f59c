/**
 * `gpumem runs` compares supervised runs on their step timing: two runs of a loop (fake torch, fake NVML, real
 * processes), one starved by its input and one not, are listed with the step time, data-wait share and
 * samples/s their own reports measured — and a run without a DataLoader shows none.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { companionSetup, dataLoaderLoop, gpumem } from '../helpers/companion-e2e.js';

const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

interface Steps { meanStepMs: number; dataWaitShare: number; samplesPerSec: number }
interface RunReport { runId: number; attempts: Array<{ plugins: { companion: { processes: Array<{ steps: Steps | null }> } } }> }
interface Row { id: number; meanStepMs: number | null; dataWaitShare: number | null; samplesPerSec: number | null }

describe('gpumem runs with step timing', () => {
  it('lists step time, data wait and samples/s per run exactly as each run measured them', async () => {
    const t = companionSetup(cleanups);
    const runOne = async (code: string): Promise<RunReport> => {
      const r = await gpumem(['run', '--json', '--source', 'nvml', '--interval-ms', '50', '--', 'python3', '-c', code], t.env);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as RunReport;
    };
    const starved = await runOne(dataLoaderLoop(30, 10, 64));
    const fed = await runOne(dataLoaderLoop(1, 20, 64));
    const plain = await runOne('import time, torch\ntime.sleep(0.1)');
    const list = await gpumem(['runs', '--json'], t.env);
    const rows = (JSON.parse(list.stdout) as { schemaVersion: number; runs: Row[] }).runs;
    for (const report of [starved, fed]) {
      const s = report.attempts[0]?.plugins.companion.processes[0]?.steps as Steps;
      const row = rows.find((r) => r.id === report.runId);
      expect([row?.meanStepMs, row?.dataWaitShare, row?.samplesPerSec]).toEqual([s.meanStepMs, s.dataWaitShare, s.samplesPerSec]);
    }
    const byId = (id: number): Row => rows.find((r) => r.id === id) as Row;
    expect(byId(starved.runId).dataWaitShare).toBeGreaterThan(0.6);
    expect(byId(fed.runId).dataWaitShare).toBeLessThan(0.2);
    expect([byId(plain.runId).meanStepMs, byId(plain.runId).dataWaitShare, byId(plain.runId).samplesPerSec]).toEqual([null, null, null]);

    const table = (await gpumem(['runs'], t.env)).stdout.split('\n');
    expect(table[0]).toMatch(/PEAK +STEP +DATA WAIT +SAMPLES\/S +COMMAND/);
    const line = (id: number): string => table.find((l) => l.trimStart().startsWith(`${id} `)) as string;
    const s = starved.attempts[0]?.plugins.companion.processes[0]?.steps as Steps;
    expect(line(starved.runId)).toContain(`${s.meanStepMs.toFixed(1)} ms  `);
    expect(line(starved.runId)).toContain(` ${s.samplesPerSec.toFixed(1)}  `);
    expect(line(plain.runId)).toMatch(/ +- +- +- +python3/);
    const human = await gpumem(['run', '--no-history', '--source', 'nvml', '--', 'python3', '-c', dataLoaderLoop(1, 5, 8)], t.env);
    expect(human.stderr).toMatch(/\n {2}steps of pid \d+: 20 steps of \d+\.\d ms, \d+% waiting for data, \d+\.\d samples\/s, batch 8\n/);
    const show = await gpumem(['runs', 'show', String(starved.runId)], t.env);
    expect(show.stdout).toMatch(/steps of pid \d+: 20 steps of \d+\.\d ms, \d+% waiting for data, \d+\.\d samples\/s, batch 64/);
  }, 90_000);
});
