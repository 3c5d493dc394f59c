/**
 * Input for `gpumem explain`: file arguments (with `*`/`?` globs in the last path part), stdin as `-`,
 * streaming reads in 1 MiB chunks so a 1 GB log never sits in memory, and a UTF-8 decoder that keeps
 * characters split across chunks whole and turns invalid bytes into U+FFFD.
 */
import { isAscii } from 'node:buffer';
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { GpumemError } from '../../core/index.js';

export const CHUNK_BYTES = 1 << 20;

/** A chunk decoder: ASCII chunks take the fast path; multi-byte characters cut at a chunk end are carried. */
export function createDecoder(): { decode(bytes: Buffer): string; end(): string } {
  let pending: Buffer | null = null;
  return {
    decode(input) {
      const bytes = pending ? Buffer.concat([pending, input]) : input;
      pending = null;
      if (isAscii(bytes)) return bytes.toString('latin1');
      const keep = incompleteTail(bytes);
      if (keep > 0) pending = Buffer.from(bytes.subarray(bytes.length - keep));
      return bytes.toString('utf8', 0, bytes.length - keep);
    },
    end() {
      const rest = pending ? pending.toString('utf8') : '';
      pending = null;
      return rest;
    },
  };
}

/** Bytes at the end of `bytes` that start a UTF-8 character whose continuation has not arrived yet. */
function incompleteTail(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/** Expands globs in the last path segment; plain paths pass through (their absence is reported later). */
export function expandInputs(args: readonly string[], cwd: string): string[] {
  const out: string[] = [];
  for (const arg of args) {
    if (arg === '-' || !/[*?[]/.test(basename(arg))) {
      out.push(arg);
      continue;
    }
    const dir = dirname(arg);
    const pattern = new RegExp(`^${basename(arg).replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
    let names: string[];
    try {
      names = readdirSync(join(cwd, dir));
    } catch (cause) {
      throw new GpumemError('INPUT_NOT_FOUND', `${arg}: the folder ${dir} cannot be read`, { cause, hint: 'check the path of the glob' });
    }
    const matches = names.filter((n) => pattern.test(n)).sort().map((n) => (dir === '.' && !arg.startsWith('./') ? n : join(dir, n)));
    if (matches.length === 0) throw new GpumemError('INPUT_NOT_FOUND', `${arg}: no file matches`, { hint: 'check the pattern; quote it so the shell does not expand it' });
    out.push(...matches);
  }
  return out;
}

/** Opens a file for reading, with one clear error when it is missing, a folder, or unreadable. */
export function openInput(path: string, cwd: string): number {
  const full = join(cwd, path);
  let stat;
  try {
    stat = statSync(path.startsWith('/') ? path : full);
  } catch (cause) {
    throw new GpumemError('INPUT_NOT_FOUND', `${path}: no such file`, { cause, hint: 'give a log file, a glob, or - for stdin' });
  }
  if (stat.isDirectory()) throw new GpumemError('INPUT_UNREADABLE', `${path} is a folder`, { hint: `give the log files in it, e.g. "${join(path, '*.log')}"` });
  try {
    return openSync(path.startsWith('/') ? path : full, 'r');
  } catch (cause) {
    throw new GpumemError('INPUT_UNREADABLE', `${path}: cannot be read`, { cause, hint: 'check the file permissions' });
  }
}

/** Reads `fd` from `position` to its current end, calling `onText` per decoded chunk; returns the new position. */
export function readRange(fd: number, position: number, onText: (text: string) => void, decoder = createDecoder()): number {
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let pos = position;
  for (;;) {
    const n = readSync(fd, buffer, 0, CHUNK_BYTES, pos);
    if (n === 0) break;
    pos += n;
    onText(decoder.decode(buffer.subarray(0, n)));
  }
  return pos;
}

/** Reads a whole file through `onText` and closes it. */
export function readWhole(path: string, cwd: string, onText: (text: string) => void): void {
  const fd = openInput(path, cwd);
  const decoder = createDecoder();
  try {
    readRange(fd, 0, onText, decoder);
    const rest = decoder.end();
    if (rest !== '') onText(rest);
  } finally {
    closeSync(fd);
  }
}

/** Memory snapshots (`*.pickle`) in the folder of `path`, for a pointer to `gpumem snapshot`. */
export function snapshotsNear(path: string, cwd: string): string[] {
  if (path === '-') return [];
  const dir = dirname(path);
  try {
    return readdirSync(dir.startsWith('/') ? dir : join(cwd, dir)).filter((n) => n.endsWith('.pickle')).sort().map((n) => join(dir, n));
  } catch {
    return [];
  }
}
