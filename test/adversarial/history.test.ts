/**
 * The run history under faults: a read-only or full file system at start, a disk that fills while the job
 * runs, several first runs racing on a new database, a damaged row. History is a convenience: the job must
 * run, its report must print and its exit status must come back, and no record may be lost to a race.
 * File-system faults use small tmpfs mounts, which needs root; elsewhere those cases are skipped, visibly.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openHistory } from '../../src/store/index.js';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { expectNoHang, expectNoLostRecords, expectNoStackTrace, gpumem, secondUser, tempDir } from './harness.js';



const tmp = tempDir('gpumem-adv-history-');
const mounts: string[] = [];
afterAll(() => {
  for (const m of mounts.splice(0)) spawnSync('umount', ['-l', m]);
  tmp.remove();
});

const scenarioPath = join(tmp.dir, 'scenario.txt');
writeScenario(scenarioPath, { driverVersion: '590.44.01', cudaVersion: 13010, devices: [fakeH100(0)] });
const ENV = fakeNvmlEnv('590', scenarioPath);
const RUN = ['run', '--no-companion', '--interval-ms', '20', '--cleanup-timeout-ms', '200'];

/** A small tmpfs at a fresh folder, or the reason it cannot be made here. */
function smallDisk(name: string, size: string): { dir: string | null; reason: string } {
  if (process.getuid?.() !== 0) return { dir: null, reason: 'needs root to mount a small tmpfs; not root here' };
  const dir = join(tmp.dir, name);
  mkdirSync(dir);
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status !== 0) return { dir: null, reason: `mount failed: ${r.stderr.trim()}` };
  mounts.push(dir);
  return { dir, reason: '' };
}

const probe = smallDisk('probe', '64k');
const canMount = probe.dir !== null;

describe.skipIf(!canMount)(`history on a faulty disk (${canMount ? 'tmpfs mounts' : `skipped: ${probe.reason}`})`, () => {
  it('read-only database at start: one warning, the job runs and its status comes back', async () => {
    const disk = smallDisk('ro', '1m').dir!;
    const db = join(disk, 'history.db');
    openHistory(db).close();
    expect(spawnSync('mount', ['-o', 'remount,ro', disk]).status).toBe(0);
    const marker = join(tmp.dir, 'ran-ro');
    const r = await gpumem([...RUN, '--db', db, '--', process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x'); process.exit(3)`], { env: ENV });
    expectNoHang(r, 'run on a read-only history');
    expectNoStackTrace(r, 'run on a read-only history');
    expect(existsSync(marker)).toBe(true);
    expect(r.code).toBe(3);
    expect(r.stderr.match(/warning: .*history/g)).toHaveLength(1);
    expect(r.stderr).toMatch(/gpumem run: exit 3/);
  });

  for (const existing of [false, true]) {
    it(`full disk at start (${existing ? 'an existing database, no room for a new row' : 'no room to create the database'}): one warning, the job runs`, async () => {
      const disk = smallDisk(existing ? 'full-existing' : 'full-new', '256k').dir!;
      const db = join(disk, 'history.db');
      if (existing) openHistory(db).close();
      spawnSync('/bin/sh', ['-c', `dd if=/dev/zero of=${disk}/fill bs=1k 2>/dev/null; true`]);
      const r = await gpumem([...RUN, '--db', db, '--', process.execPath, '-e', 'process.exit(4)'], { env: ENV });
      expectNoHang(r, 'run on a full disk');
      expectNoStackTrace(r, 'run on a full disk');
      expect(r.code).toBe(4);
      expect(r.stderr.match(/warning: .*history/g)).toHaveLength(1);
      expect(r.stderr).toMatch(/gpumem run: exit 4/);
    });
  }

  it('disk filling during the run: the report prints, the child status returns, a warning says history was not written', async () => {
    const disk = smallDisk('filling', '2m').dir!;
    const db = join(disk, 'history.db');
    // The job fills the disk the history lives on, then fails with its own status.
    const fill = `try { require('fs').writeFileSync(${JSON.stringify(join(disk, 'fill'))}, Buffer.alloc(4 << 20)) } catch {} ; process.exit(5)`;
    const r = await gpumem([...RUN, '--db', db, '--', process.execPath, '-e', fill], { env: ENV });
    expectNoHang(r, 'run while the disk fills');
    expectNoStackTrace(r, 'run while the disk fills');
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/gpumem run: exit 5/);
    expect(r.stderr).toMatch(/warning: the run history could not be written/);
    expect(r.stderr).not.toMatch(/stored as run/);
  });
});

const other = secondUser();
afterAll(other.remove);
describe.skipIf(!other.user)(`history file another user cannot write${other.user ? '' : ` (skipped: ${other.reason})`}`, () => {
  it("a history file that is read-only for the user: one warning, the job runs and its status comes back", async () => {
    const user = other.user!;
    const dir = join(tmp.dir, 'shared-db');
    mkdirSync(dir, { mode: 0o755 });
    const db = join(dir, 'history.db');
    openHistory(db).close();
    chmodSync(tmp.dir, 0o755);
    const r = await gpumem([...RUN, '--db', db, '--', process.execPath, '-e', `process.exit(6)`], { env: ENV, spawn: { uid: user.uid, gid: user.gid } });
    expectNoHang(r, 'run on a read-only history file');
    expectNoStackTrace(r, 'run on a read-only history file');
    expect(r.code).toBe(6);
    expect(r.stderr.match(/warning: .*history/g)).toHaveLength(1);
    expect(r.stderr).toMatch(/gpumem run: exit 6/);
  });
});

describe('history races and damage', () => {
  it('six concurrent first runs on a new database lose no record', async () => {
    const db = join(tmp.dir, 'race', 'history.db');
    const runs = await Promise.all(Array.from({ length: 6 }, (_, i) => gpumem([...RUN, '--db', db, '--', process.execPath, '-e', `process.exit(${i})`], { env: ENV, timeoutMs: 30_000 })));
    runs.forEach((r, i) => {
      expectNoHang(r, `concurrent run ${i}`);
      expectNoStackTrace(r, `concurrent run ${i}`);
      expect(r.code).toBe(i);
      expect(r.stderr).not.toMatch(/warning/);
    });
    const list = await gpumem(['runs', '--db', db, '--json']);
    const rows = (JSON.parse(list.stdout) as { runs: Array<{ status: string; exitCode: number }> }).runs;
    expectNoLostRecords(rows.filter((x) => x.status !== 'running').length, 6, 'concurrent first runs');
    expect(rows.map((x) => x.exitCode).sort()).toEqual([0, 1, 2, 3, 4, 5]);
  }, 60_000);

  it('six first runs that all found the database unmigrated and wait for the lock keep their record (schema migrated once)', async () => {
    // The file exists in WAL mode at schema version 0 and another connection holds the write lock, so every
    // gpumem reads version 0 and then queues for the lock: the interleaving of a real race, made certain.
    const db = join(tmp.dir, 'queued', 'history.db');
    mkdirSync(join(db, '..'));
    const holder = new Database(db);
    holder.pragma('journal_mode = WAL');
    holder.exec('BEGIN IMMEDIATE');
    const runs = Array.from({ length: 6 }, (_, i) => gpumem([...RUN, '--db', db, '--', process.execPath, '-e', `process.exit(${i})`], { env: ENV, timeoutMs: 30_000 }));
    await new Promise((r) => setTimeout(r, 2500));
    holder.exec('COMMIT');
    holder.close();
    const results = await Promise.all(runs);
    results.forEach((r, i) => {
      expectNoHang(r, `queued run ${i}`);
      expectNoStackTrace(r, `queued run ${i}`);
      expect(r.code).toBe(i);
    });
    const list = await gpumem(['runs', '--db', db, '--json']);
    const rows = (JSON.parse(list.stdout) as { runs: Array<{ status: string }> }).runs;
    expectNoLostRecords(rows.filter((x) => x.status !== 'running').length, 6, 'first runs queued on the migration lock');
  }, 60_000);

  it('a damaged row shows as unreadable in gpumem runs; the other rows still list', async () => {
    const db = join(tmp.dir, 'damaged.db');
    for (const code of [0, 1]) await gpumem([...RUN, '--db', db, '--', process.execPath, '-e', `process.exit(${code})`], { env: ENV });
    const h = openHistory(db);
    const [first] = h.prepare('SELECT id FROM runs ORDER BY id').all() as Array<{ id: number }>;
    h.prepare("UPDATE runs SET argv_json = '[\"python\", trunc', started_at_ms = 'yesterday', gpus_json = '{' WHERE id = ?").run(first!.id);
    h.close();
    const r = await gpumem(['runs', '--db', db]);
    expectNoStackTrace(r, 'runs with a damaged row');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^\\s*${first!.id} .*\\(unreadable row: damaged fields argv_json, gpus_json, started_at_ms\\)`, 'm'));
    expect(r.stdout).toMatch(/node -e process\.exit\(1\)/);
    const show = await gpumem(['runs', 'show', String(first!.id), '--db', db]);
    expectNoStackTrace(show, 'runs show on a damaged row');
    expect(show.stdout).toMatch(/this stored run is damaged/);
  });
});
