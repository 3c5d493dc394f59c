/**
 * Schema of the run history, as numbered migrations. `PRAGMA user_version` records the last one applied.
 * All pending migrations run in one IMMEDIATE transaction that re-reads user_version after taking the
 * write lock, so several gpumem processes opening a new database at once apply each migration exactly once
 * (the others wait, then find nothing to do) and a crash mid-migration leaves the previous version.
 * Append new migrations; never edit an applied one.
 */
import { GpumemError } from '../../core/errors.js';
import type { Db } from './open.js';

const MIGRATIONS: readonly string[] = [
  // 1: runs, attempts and what was seen during them.
  `
  CREATE TABLE pipelines (
    id INTEGER PRIMARY KEY,
    file TEXT NOT NULL,
    started_at_ms INTEGER NOT NULL,
    duration_ms INTEGER,
    status TEXT NOT NULL,
    report_json TEXT
  );
  CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    pipeline_id INTEGER REFERENCES pipelines(id),
    stage TEXT,
    argv_json TEXT NOT NULL,
    cwd TEXT NOT NULL,
    gpus_json TEXT,
    started_at_ms INTEGER NOT NULL,
    duration_ms INTEGER,
    status TEXT NOT NULL,
    exit_code INTEGER,
    exit_signal TEXT,
    retries INTEGER NOT NULL DEFAULT 0,
    report_json TEXT
  );
  CREATE TABLE env_decisions (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name TEXT NOT NULL, value TEXT, previous TEXT, action TEXT NOT NULL, reason TEXT NOT NULL
  );
  CREATE TABLE attempts (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    argv_json TEXT NOT NULL,
    batch INTEGER, accum INTEGER,
    duration_ms INTEGER NOT NULL,
    exit_code INTEGER, exit_signal TEXT,
    PRIMARY KEY (run_id, attempt)
  );
  CREATE TABLE peaks (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL, gpu_index INTEGER NOT NULL, gpu_uuid TEXT NOT NULL,
    peak_bytes INTEGER NOT NULL, at_ms INTEGER NOT NULL, chosen INTEGER NOT NULL
  );
  CREATE TABLE samples (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL, t_ms INTEGER NOT NULL, gpu_uuid TEXT NOT NULL, bytes INTEGER NOT NULL
  );
  CREATE TABLE oom_events (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL, line INTEGER NOT NULL, text TEXT NOT NULL, event_json TEXT
  );
  CREATE TABLE leftovers (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL, pid INTEGER NOT NULL, cmdline TEXT, gpu_bytes INTEGER, outcome TEXT NOT NULL, detail TEXT NOT NULL
  );
  CREATE INDEX runs_started ON runs(started_at_ms);
  CREATE INDEX samples_run ON samples(run_id, attempt, t_ms);
  `,
  // 2: PyTorch's own numbers per GPU from the companion: the split at the tree's peak and the allocator's peaks.
  `
  CREATE TABLE pytorch_peaks (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL, gpu_index INTEGER, gpu_uuid TEXT NOT NULL,
    tree_bytes INTEGER, allocated_bytes INTEGER, reserved_bytes INTEGER, non_pytorch_bytes INTEGER,
    peak_allocated_bytes INTEGER, peak_reserved_bytes INTEGER, num_alloc_retries INTEGER, num_ooms INTEGER
  );
  `,
  // 3: the companion's step timing per process, so runs can be compared on step time, data wait and samples/s.
  `
  CREATE TABLE step_timing (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL, pid INTEGER NOT NULL, steps INTEGER NOT NULL,
    mean_step_ms REAL, data_wait_share REAL, samples_per_sec REAL, batch_seen INTEGER, batch_asked INTEGER
  );
  `,
  // 4: the companion's PyTorch split over time per GPU (≤ 300 points per attempt, like samples).
  `
  CREATE TABLE pytorch_samples (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL, t_ms INTEGER NOT NULL, gpu_uuid TEXT NOT NULL, allocated_bytes INTEGER, reserved_bytes INTEGER
  );
  CREATE INDEX pytorch_samples_run ON pytorch_samples(run_id, attempt, t_ms);
  `,
];

/** The schema version this build writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Applies every migration above the database's user_version. Refuses a database from a newer gpumem. */
export function migrate(db: Db): void {
  const version = (): number => db.pragma('user_version', { simple: true }) as number;
  const check = (current: number): void => {
    if (current > SCHEMA_VERSION) {
      throw new GpumemError('STORE_ERROR', `the run history has schema version ${current}, newer than this gpumem understands (${SCHEMA_VERSION})`, {
        hint: 'upgrade gpumem, or use another file with --db PATH',
      });
    }
  };
  check(version());
  if (version() === SCHEMA_VERSION) return;
  db.transaction(() => {
    // Read again under the write lock: another process may have migrated while we waited for it.
    const current = version();
    check(current);
    for (let v = current; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v] as string);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
