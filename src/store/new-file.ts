/**
 * Files gpumem creates at a path the user named (`--html OUT`, `record --out FILE`). Such a path may lie in
 * a folder other users can write to (sticky /tmp), where one of them can plant a symbolic link, or a hard
 * link to a file of ours, under the name before we write: opening that name would let them choose what we
 * overwrite (root's own files, when root runs gpumem). So no file is opened by a name that may already
 * exist: every file is created with O_CREAT|O_EXCL|O_NOFOLLOW, and an existing file is replaced by renaming
 * a new one over it (rename replaces the name; it never writes through a link). A name that is a symbolic
 * link, not a regular file, or another user's file is refused. Only the last part of the path is guarded:
 * the folders named in it are the user's choice and are followed. docs/output-files.md says this for users.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fchmodSync, lstatSync, openSync, readlinkSync, renameSync, rmSync, writeSync, type Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { GpumemError } from '../core/errors.js';
import { printable } from '../core/text.js';

const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** How a refusal names the file: `label` is the option or a noun ("--html"), `shown` the path as typed. */
export interface NewFileLabel {
  label: string;
  shown?: string;
}

/** Test seam: runs between the look at the target and its creation, where another process could act. */
export interface NewFileHooks {
  afterCheck?: () => void;
}

const HINT = 'gpumem never writes through a symbolic link or over another user\'s file (either could be planted in a shared folder such as /tmp); name a new file, or a regular file of your own';

function refusal(what: NewFileLabel, path: string, why: string): GpumemError {
  return new GpumemError('INPUT_UNSAFE', `${what.label}: refusing to write ${printable(what.shown ?? path)}: ${why}`, { hint: HINT, details: { path } });
}

/** Why `st` (the lstat of the target) must not be replaced, or null when it may. */
function targetProblem(path: string, st: Stats): string | null {
  if (st.isSymbolicLink()) {
    let to = '';
    try {
      to = ` to ${printable(readlinkSync(path))}`;
    } catch {
      // Gone or unreadable: the refusal stands without naming where it pointed.
    }
    return `it is a symbolic link${to} (owned by uid ${st.uid})`;
  }
  if (!st.isFile()) return st.isDirectory() ? 'it is a directory' : 'it is not a regular file';
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return `it belongs to uid ${st.uid}, not to uid ${uid}`;
  return null;
}

/** The target as it is now: null when nothing is there; throws the refusal when it must not be replaced. */
function inspectTarget(path: string, what: NewFileLabel): Stats | null {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const problem = targetProblem(path, st);
  if (problem !== null) throw refusal(what, path, problem);
  return st;
}

/** A new file beside `path` under a random hidden name (O_EXCL|O_NOFOLLOW), so a partial file is never seen under the real name. */
function createTemporary(path: string, mode: number): { fd: number; tmp: string } {
  // NAME_MAX is 255 bytes: keep the user's name recognisable but short enough for the suffix.
  const stem = basename(path).slice(0, 180);
  for (let attempt = 0; ; attempt++) {
    const tmp = join(dirname(path), `.${stem}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      return { fd: openSync(tmp, CREATE, mode), tmp };
    } catch (error) {
      // Someone holds this random name: take another; three collisions in a row are no accident.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 2) throw error;
    }
  }
}

/** The old file's permission bits, so replacing a 0600 report does not open it to others. */
function keepMode(fd: number, old: Stats): void {
  fchmodSync(fd, old.mode & 0o777);
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
}

/**
 * Writes `data` as the whole content of `path`: into a new temporary file in the same folder, then renamed
 * over the target, so the target is either its old self or the complete new file. A new file gets the
 * usual mode (0666 less the umask); a replaced one keeps its mode. Throws GpumemError('INPUT_UNSAFE') when
 * the target is a symbolic link, not a regular file, or another user's; system errors (ENOENT, EACCES…)
 * are thrown as they are, for the caller to word.
 */
export function writeNewFile(path: string, data: string | Uint8Array, what: NewFileLabel, hooks: NewFileHooks = {}): void {
  const old = inspectTarget(path, what);
  hooks.afterCheck?.();
  // Private while being written when the file it replaces is; otherwise the umask decides, as for any new file.
  const { fd, tmp } = createTemporary(path, old ? 0o600 : 0o666);
  let open = true;
  try {
    writeAll(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    if (old) keepMode(fd, old);
    closeSync(fd);
    open = false;
    renameSync(tmp, path);
  } catch (error) {
    if (open) closeSync(fd);
    rmSync(tmp, { force: true });
    throw error;
  }
}

/**
 * Creates `path` for writing as it grows (a recording) and returns its descriptor. Nothing there: created
 * with O_CREAT|O_EXCL|O_NOFOLLOW, so a link or file that appears after the look is refused, never opened.
 * A regular file of ours there: a new file (its mode kept) is renamed over it at once, so the old content
 * is replaced as a whole rather than truncated in place (hard links to it keep the old content). Refusals
 * and system errors as in {@link writeNewFile}.
 */
export function createNewFile(path: string, what: NewFileLabel, hooks: NewFileHooks = {}): number {
  const old = inspectTarget(path, what);
  hooks.afterCheck?.();
  if (old === null) {
    try {
      return openSync(path, CREATE, 0o666);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' || code === 'ELOOP') throw refusal(what, path, 'something appeared under that name while gpumem was creating it; nothing was written to it');
      throw error;
    }
  }
  const { fd, tmp } = createTemporary(path, 0o600);
  try {
    keepMode(fd, old);
    renameSync(tmp, path);
    return fd;
  } catch (error) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw error;
  }
}
