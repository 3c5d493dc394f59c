/**
 * Opens the run-history database: better-sqlite3 in WAL mode (a writer killed mid-transaction leaves the
 * last committed state intact; readers never block the writer), in the XDG data directory unless a path is
 * given, migrated to the current schema on open.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { GpumemError } from '../../core/errors.js';
import { printable } from '../../core/text.js';
import { migrate } from './migrations.js';

export type Db = Database.Database;

/** `$XDG_DATA_HOME/gpumem/history.db`, falling back to `~/.local/share/gpumem/history.db`. */
export function defaultDbPath(env: Readonly<Record<string, string | undefined>>): string {
  const base = env.XDG_DATA_HOME && env.XDG_DATA_HOME.startsWith('/') ? env.XDG_DATA_HOME : join(env.HOME ?? homedir(), '.local', 'share');
  return join(base, 'gpumem', 'history.db');
}

/** Opens (creating when needed) and migrates the database at `path`. Errors become STORE_ERROR with a hint. */
export function openHistory(path: string): Db {
  refuseForeignLink(path);
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

/**
 * A history path that is a symbolic link another user made (planted in a shared folder such as /tmp) is
 * refused: SQLite would follow it and write the history, and its -wal and -shm files, where that user
 * chose. A link of one's own is the user's choice and is followed.
 */
function refuseForeignLink(path: string): void {
  const uid = process.getuid?.();
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return;
  }
  if (uid === undefined || !st.isSymbolicLink() || st.uid === uid) return;
  throw new GpumemError('INPUT_UNSAFE', `refusing to open the run history at ${printable(path)}: it is a symbolic link owned by uid ${st.uid}, not by uid ${uid}`, {
    hint: 'another user may have planted it; choose a history file of your own with --db PATH',
  });
}
