import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { parseOomText } from '../../../src/core/index.js';
import { runsDocument } from '../../../src/core/documents/runs.js';
import { documentProblems } from '../../helpers/document-schemas.js';
import { HISTORY_SCHEMA_VERSION, beginRun, completeRun, defaultDbPath, getRun, listRuns, openHistory, type HistoryReport } from '../../../src/store/index.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'gpumem-db-'));
  dirs.push(d);
  return d;
}

const OOM = parseOomText('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.50 GiB is free.')[0]!;

const report = (peak: number, code: number | null): HistoryReport => ({
  argv: ['python', 'train.py'], cwd: '/w', startedAtMs: 1000, durationMs: 5000, gpus: [{ index: 1, uuid: 'GPU-b' }],
  env: [{ name: 'CUDA_DEVICE_ORDER', value: 'PCI_BUS_ID', previous: null, action: 'set', reason: 'r' }],
  attempts: [{
    attempt: 1, argv: ['python', 'train.py'], batch: null, durationMs: 5000, exit: { code, signal: null },
    peaks: [{ index: 1, uuid: 'GPU-b', peakBytes: peak, atMs: 10, chosen: true }, { index: 2, uuid: 'GPU-c', peakBytes: 7, atMs: 11, chosen: false }],
    ooms: [{ line: 3, text: 'CUDA out of memory', event: OOM, causes: [] }],
    cleanup: { leftovers: [{ pid: 42, cmdline: ['w'], gpuBytes: 5, outcome: 'killed', detail: 'd' }] },
    timeline: [{ tMs: 0, bytes: { 'GPU-b': peak } }],
  }],
  retries: 0, exit: { code, signal: null },
});

describe('run history', () => {
  it('puts the database in the XDG data directory', () => {
    expect(defaultDbPath({ XDG_DATA_HOME: '/x/data', HOME: '/home/u' })).toBe('/x/data/gpumem/history.db');
    expect(defaultDbPath({ HOME: '/home/u' })).toBe('/home/u/.local/share/gpumem/history.db');
    expect(defaultDbPath({ XDG_DATA_HOME: 'relative', HOME: '/home/u' })).toBe('/home/u/.local/share/gpumem/history.db');
  });

  it('stores a run and reads back its numbers exactly, in WAL mode, at the current schema version', () => {
    const path = join(tmp(), 'h.db');
    const db = openHistory(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(HISTORY_SCHEMA_VERSION);
    const running = beginRun(db, { argv: ['a'], cwd: '/', startedAtMs: 1 });
    const id = beginRun(db, { argv: ['python', 'train.py'], cwd: '/w', startedAtMs: 1000 });
    completeRun(db, id, report(3 * 2 ** 30 + 1, 0));
    const rows = listRuns(db);
    expect(rows.map((r) => [r.id, r.status])).toEqual([[id, 'ok'], [running, 'running']]);
    expect(rows[0]?.peakBytes).toBe(3 * 2 ** 30 + 1 + 7);
    const got = getRun(db, id);
    expect(got?.report?.attempts[0]?.peaks[0]?.peakBytes).toBe(3 * 2 ** 30 + 1);
    expect(got?.report?.damage).toEqual([]);
    expect(db.prepare('SELECT COUNT(*) AS n FROM leftovers WHERE run_id = ?').get(id)).toEqual({ n: 1 });
    expect(getRun(db, 999)).toBeNull();
    db.close();
    // Reopening does not re-run migrations.
    expect(listRuns(openHistory(path))).toHaveLength(2);
  });

  it('a GPU list without a UUID, or with one that is no string, is a damaged field, not a row the runs document rejects', () => {
    const db = openHistory(join(tmp(), 'h.db'));
    const id = beginRun(db, { argv: ['python', 'train.py'], cwd: '/w', startedAtMs: 1000 });
    completeRun(db, id, report(1, 0));
    expect(listRuns(db)[0]).toMatchObject({ gpus: [{ index: 1, uuid: 'GPU-b' }] });
    expect(listRuns(db)[0]?.unreadable).toBeUndefined();
    for (const stored of ['[{"index":0}]', '[{"index":0,"uuid":7}]', '[{"uuid":"GPU-b"}]']) {
      db.prepare('UPDATE runs SET gpus_json = ? WHERE id = ?').run(stored, id);
      const [row] = listRuns(db);
      expect([row?.gpus, row?.unreadable]).toEqual([null, 'damaged field gpus_json']);
      expect(documentProblems('gpumem.runs', runsDocument([row!], []))).toEqual([]);
    }
    db.close();
  });

  it('refuses a database from a newer gpumem', () => {
    const path = join(tmp(), 'new.db');
    const raw = new Database(path);
    raw.pragma(`user_version = ${HISTORY_SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => openHistory(path)).toThrow(/newer than this gpumem/);
  });

  it('names a file that is not a database as bad input (exit 2), leaving the file as it was', () => {
    const path = join(tmp(), 'notes.txt');
    const text = 'not a database, just notes\n'.repeat(200);
    writeFileSync(path, text);
    let caught: unknown;
    try {
      openHistory(path);
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: 'INPUT_MALFORMED', message: expect.stringContaining(path) });
    expect(readFileSync(path, 'utf8')).toBe(text);
  });

  it('survives kill -9 of a writer mid-write: integrity ok and no half-written run', async () => {
    const path = join(tmp(), 'crash.db');
    openHistory(path).close();
    for (let round = 0; round < 3; round++) {
      const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'writer.ts'), path], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      await new Promise((r) => setTimeout(r, 150 + round * 70));
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    const db = openHistory(path);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const runs = db.prepare('SELECT id, status FROM runs').all() as Array<{ id: number; status: string }>;
    expect(runs.filter((r) => r.status === 'ok').length).toBeGreaterThan(0);
    // Every completed run has all its rows; at most one run per writer was cut between begin and complete.
    const incomplete = db.prepare(`SELECT r.id FROM runs r WHERE r.status = 'ok' AND
      ((SELECT COUNT(*) FROM attempts a WHERE a.run_id = r.id) != 2 OR (SELECT COUNT(*) FROM samples s WHERE s.run_id = r.id) != 600)`).all();
    expect(incomplete).toEqual([]);
    expect(runs.filter((r) => r.status === 'running').length).toBeLessThanOrEqual(3);
    expect(db.prepare(`SELECT COUNT(*) AS n FROM attempts WHERE run_id IN (SELECT id FROM runs WHERE status = 'running')`).get()).toEqual({ n: 0 });
  }, 30000);
});
