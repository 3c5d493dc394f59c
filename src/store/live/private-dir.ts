/**
 * Private folders and files in places other users can write to (`/tmp`). A folder is created exclusively
 * with mode 0700, or, when it already exists, used only if `lstat` shows a real directory (not a symlink)
 * owned by us with no group or other access: another user who created `/tmp/gpumem-0` first, or planted a
 * symlink there, gets a refusal instead of root's files. Files are written under a fresh random name opened
 * with O_EXCL|O_NOFOLLOW and renamed into place, and read only when they are regular files of ours, no
 * larger than a cap, so a symlink to /dev/zero or a FIFO cannot make a reader hang or grow.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** Why `dir` cannot be trusted as our private folder, or null when it can. */
export function privateDirProblem(dir: string, uid: number): string | null {
  let st;
  try {
    // A folder that does not exist is the common case of a live view asking every second: no error built for it.
    st = lstatSync(dir, { throwIfNoEntry: false });
  } catch (error) {
    return `${dir} cannot be inspected (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  if (st === undefined) return `${dir} cannot be inspected (ENOENT)`;
  if (st.isSymbolicLink()) return `${dir} is a symbolic link`;
  if (!st.isDirectory()) return `${dir} is not a directory`;
  if (st.uid !== uid) return `${dir} belongs to uid ${st.uid}, not to uid ${uid}`;
  if ((st.mode & 0o077) !== 0) return `${dir} is open to other users (mode ${(st.mode & 0o777).toString(8)})`;
  return null;
}

/**
 * Makes sure `dir` is our private folder: creates it with mode 0700 (and its missing parents, as
 * XDG_RUNTIME_DIR may not exist yet), or verifies the existing one. Throws an Error saying why it refuses.
 */
export function ensurePrivateDir(dir: string, uid: number): void {
  mkdirSync(dirname(dir), { recursive: true, mode: 0o700 });
  try {
    mkdirSync(dir, { mode: 0o700 });
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const problem = privateDirProblem(dir, uid);
  if (problem) throw new Error(`refusing to use ${dir}: ${problem.replace(`${dir} `, '')}`);
}

/** Writes `text` to `path` atomically: a new random temporary name (O_EXCL|O_NOFOLLOW, mode 0600), then rename. */
export function writePrivateFile(path: string, text: string): void {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    const bytes = Buffer.from(text, 'utf8');
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
  } catch (error) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw error;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
}

/**
 * Reads `path` when it is a regular file owned by `uid` and at most `maxBytes` long; otherwise returns why
 * not. Opened with O_NOFOLLOW|O_NONBLOCK and checked with fstat on the open descriptor, so neither a symlink
 * nor a FIFO nor a device is ever read.
 */
export function readPrivateFile(path: string, uid: number, maxBytes: number): { ok: true; text: string } | { ok: false; reason: string } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, reason: code === 'ELOOP' ? 'a symbolic link' : `unreadable (${code ?? String(error)})` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, reason: 'not a regular file' };
    if (st.uid !== uid) return { ok: false, reason: `owned by uid ${st.uid}` };
    if (st.size > maxBytes) return { ok: false, reason: `larger than ${maxBytes} bytes` };
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return { ok: true, text: buf.subarray(0, off).toString('utf8') };
  } finally {
    closeSync(fd);
  }
}
