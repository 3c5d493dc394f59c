/**
 * Opens the run-history database: better-sqlite3 in WAL mode (a writer killed mid-transaction leaves the
 * last committed state intact; readers never block the writer), in the XDG data directory unless a path is
 * given, migrated to the current schema on open.
 */
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { GpumemError } from '../../core/errors.js';
import { migrate } from './migrations.js';

export type Db = Database.Database;

/** `$XDG_DATA_HOME/gpumem/history.db`, falling back to `~/.local/share/gpumem/history.db`. */
export function defaultDbPath(env: Readonly<Record<string, string | undefined>>): string {
  const base = env.XDG_DATA_HOME && env.XDG_DATA_HOME.startsWith('/') ? env.XDG_DATA_HOME : join(env.HOME ?? homedir(), '.local', 'share');
  return join(base, 'gpumem', 'history.db');
}

/** Opens (creating when needed) and migrates the database at `path`. Errors become STORE_ERROR with a hint. */
export function openHistory(path: string): Db {
  try {
    mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path);
    // First, so that concurrent first runs wait for each other's schema instead of failing with SQLITE_BUSY.
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    // NORMAL is durable against process crashes in WAL mode; only a power loss may drop the last commit.
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    migrate(db);
    return db;
  } catch (error) {
    if (error instanceof GpumemError) throw error;
    // A file that is not SQLite is the user's input (a wrong --db), not a failure of ours: exit 2, not 1.
    const notDb = (error as { code?: unknown }).code === 'SQLITE_NOTADB';
    throw new GpumemError(notDb ? 'INPUT_MALFORMED' : 'STORE_ERROR', `cannot open the run history at ${path}: ${(error as Error).message}`, {
      hint: notDb ? 'this file is not a gpumem history; choose another file with --db PATH' : 'choose another file with --db PATH, or check the directory is writable',
      cause: error,
    });
  }
}
