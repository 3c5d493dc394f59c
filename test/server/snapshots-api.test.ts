/** Snapshots over the API: a run's OOM snapshots from its run folder and uploads, analysed with what-ifs. */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulateSnapshot } from '../../src/core/allocator/index.js';
import { buildReport } from '../../src/core/snapshot/index.js';
import { readSnapshotFile } from '../../src/sources/index.js';
import { beginRun, completeRun, openHistory, type HistoryReport } from '../../src/store/index.js';
import { startHarness, type Harness } from './harness.js';

const REAL = '/work/shared/fixtures/snapshots-real/constructor_memory_snapshot.pickle';
const WHAT_IF = 'expandable_segments:False';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = async (res: Response): Promise<any> => JSON.parse(await res.text());
let h: Harness;
const auth = (): Record<string, string> => ({ Authorization: `Bearer ${h.token}` });
let dir: string;
let runId: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gpumem-serve-snap-'));
  const dbPath = join(dir, 'history.db');
  const db = openHistory(dbPath);
  runId = beginRun(db, { argv: ['python', 'train.py'], cwd: '/w', startedAtMs: 1_790_000_000_000 });
  const inFolder = join(dir, 'runs', String(runId), 'oom-0.pickle');
  mkdirSync(join(dir, 'runs', String(runId)), { recursive: true });
  copyFileSync(REAL, inFolder);
  const attempt = { attempt: 1, argv: ['python', 'train.py'], batch: null, durationMs: 10, exit: { code: 1, signal: null }, peaks: [], ooms: [], cleanup: { leftovers: [] }, timeline: [],
    plugins: { companion: { snapshots: [inFolder, '/etc/passwd', join(dir, 'runs', String(runId), 'deleted.pickle')] } } };
  const report = { argv: ['python', 'train.py'], cwd: '/w', startedAtMs: 1_790_000_000_000, durationMs: 10, gpus: [], env: [], retries: 0, exit: { code: 1, signal: null }, attempts: [attempt] };
  completeRun(db, runId, report as unknown as HistoryReport);
  db.close();
  h = await startHarness({ dbPath });
}, 60_000);

afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What `gpumem snapshot FILE --json --what-if W` prints for the fixture, with BigInts as strings. */
function expected(): unknown {
  const snapshot = readSnapshotFile(REAL);
  const report = buildReport(snapshot, { top: 10, requestBytes: null });
  const sims = simulateSnapshot(snapshot, [WHAT_IF], null);
  const doc = { ...report, devices: report.devices.map((d) => ({ ...d, simulation: sims.find((s) => s.device === d.device) ?? null })) };
  return JSON.parse(JSON.stringify(doc, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
}

describe('/api/v1/runs/{id}/snapshots', () => {
  it('lists the snapshots the run wrote; files outside the run folders or gone are not available', async () => {
    const doc = await json(await fetch(`${h.base}/api/v1/runs/${runId}/snapshots`));
    expect(doc.kind).toBe('gpumem.run-snapshots');
    expect(doc.snapshots.map((s: { name: string; available: boolean }) => [s.name, s.available])).toEqual([['oom-0.pickle', true], ['passwd', false], ['deleted.pickle', false]]);
    expect(doc.snapshots[0].sizeBytes).toBe(readFileSync(REAL).length);
  });

  it('answers the same analysis and what-if simulation as the CLI', async () => {
    const res = await fetch(`${h.base}/api/v1/runs/${runId}/snapshots/0?whatIf=${encodeURIComponent(WHAT_IF)}`);
    expect(res.status).toBe(200);
    const { source, ...doc } = await json(res);
    expect(source).toEqual({ name: 'oom-0.pickle', sizeBytes: readFileSync(REAL).length });
    expect(doc).toEqual(expected());
    expect(doc.devices[0].simulation.whatIf[0].settings).toBe(WHAT_IF);
  });

  it('refuses a file outside the run folders, a missing index and bad settings with one clear error', async () => {
    const outside = await fetch(`${h.base}/api/v1/runs/${runId}/snapshots/1`);
    expect(outside.status).toBe(404);
    expect((await json(outside)).error.code).toBe('SNAPSHOT_GONE');
    expect((await fetch(`${h.base}/api/v1/runs/${runId}/snapshots/9`)).status).toBe(404);
    expect((await fetch(`${h.base}/api/v1/runs/999/snapshots`)).status).toBe(404);
    const bad = await fetch(`${h.base}/api/v1/runs/${runId}/snapshots/0?whatIf=no_such_setting:1`);
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.message).toMatch(/no_such_setting/);
  });
});

describe('POST /api/v1/snapshots', () => {
  it('analyses an uploaded snapshot exactly as the same file from disk', async () => {
    const res = await fetch(`${h.base}/api/v1/snapshots?whatIf=${encodeURIComponent(WHAT_IF)}`, { method: 'POST', body: readFileSync(REAL), headers: auth() });
    expect(res.status).toBe(200);
    const { source, ...doc } = await json(res);
    expect(source).toEqual({ name: 'upload', sizeBytes: readFileSync(REAL).length });
    expect(doc).toEqual(expected());
  });

  it('never runs a pickle that names a Python callable', async () => {
    const evil = Buffer.from("\x80\x02cos\nsystem\n(S'touch /tmp/gpumem-pwned'\ntR.", 'latin1');
    const res = await fetch(`${h.base}/api/v1/snapshots`, { method: 'POST', body: evil, headers: auth() });
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error.code).toBe('INPUT_UNSAFE');
    expect(body.error.message).toMatch(/^upload: refusing pickle opcode GLOBAL/);
  });

  it('refuses an empty body, a GET and an upload over the limit', async () => {
    expect((await fetch(`${h.base}/api/v1/snapshots`, { method: 'POST', body: '', headers: auth() })).status).toBe(400);
    expect((await fetch(`${h.base}/api/v1/snapshots`)).status).toBe(405);
    const big = await fetch(`${h.base}/api/v1/snapshots`, { method: 'POST', body: Buffer.alloc(256 * 1024 * 1024 + 1), headers: auth() });
    expect(big.status).toBe(413);
  });
});
