/**
 * Opens the run-history database: better-sqlite3 in WAL mode (a writer killed mid-transaction leaves the
 * last committed state intact; readers never block the writer), in the XDG data directory unless a path is
 * given, migrated to the current schema on open.
 */
import { lstatSync, mkdirSync, statSync } from 'node:fs';
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

/** SQLite's answers for a file that exists but is no usable database (see openHistory). */
const NOT_A_HISTORY = new Set(['SQLITE_NOTADB', 'SQLITE_CORRUPT']);

/**
 * Opens (creating when needed) and migrates the database at `path`. A path that is no usable history — a
 * directory, a device such as /dev/null, a file that is not SQLite or a damaged database — is the user's
 * input (INPUT_*, exit 2) with a hint to move it aside or choose another; anything else (permissions, a
 * full or read-only disk) is STORE_ERROR (exit 1).
 */
export function openHistory(path: string): Db {
  refuseForeignLink(path);
  let kind: string | null = null;
  try {
    const stat = statSync(path);
    if (stat.isDirectory()) kind = 'a directory';
    else if (!stat.isFile()) kind = stat.isCharacterDevice() || stat.isBlockDevice() ? 'a device' : stat.isFIFO() ? 'a FIFO' : 'not a regular file';
  } catch {
    // Missing: created below.
  }
  if (kind !== null) {
    throw new GpumemError('INPUT_UNREADABLE', `cannot open the run history at ${path}: it is ${kind}, not a database file`, {
      hint: 'give --db the path of a history file (gpumem creates it when it does not exist)',
    });
  }
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
    // A file that is not SQLite, or a damaged one, is the user's input (a wrong --db), not a failure of ours: exit 2, not 1.
    const notDb = NOT_A_HISTORY.has(String((error as { code?: unknown }).code));
    throw new GpumemError(notDb ? 'INPUT_MALFORMED' : 'STORE_ERROR', `cannot open the run history at ${path}: ${(error as Error).message}`, {
      hint: notDb
        ? 'this file is damaged or not a gpumem history; move it aside (gpumem then starts a new one) or choose another file with --db PATH'
        : 'choose another file with --db PATH, or check the directory is writable',
      cause: error,
    });
  }
}

/**
 * Runs a read of the history; a damage SQLite finds only when it reaches the broken page (after a clean
 * open) becomes the same INPUT_MALFORMED error as a damaged file found at open, instead of a stack trace.
 */
export function readHistory<T>(db: Db, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!NOT_A_HISTORY.has(String((error as { code?: unknown }).code))) throw error;
    throw new GpumemError('INPUT_MALFORMED', `cannot read the run history at ${db.name}: ${(error as Error).message}`, {
      hint: 'this file is damaged or not a gpumem history; move it aside (gpumem then starts a new one) or choose another file with --db PATH',
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
