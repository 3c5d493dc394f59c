/**
 * Input for `gpumem explain`: file arguments (with `*`, `?` and `[…]` globs in the last path part, matched by
 * core/glob.ts), stdin as `-`, and streaming reads in 1 MiB chunks of raw bytes, so a 1 GB log never sits in
 * memory and is never decoded as a whole: the byte scanner decodes only the text around what it finds
 * (invalid UTF-8 becomes U+FFFD there).
 */
import { fifoReader, openInputFile } from '../../sources/index.js';
import { closeSync, readdirSync, readSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { GpumemError } from '../../core/errors.js';
import { hasGlobSyntax, matchGlobCounted, parseGlob } from '../../core/glob.js';
import { printable } from '../../core/text.js';

export const CHUNK_BYTES = 1 << 20;

/**
 * Expands globs in the last path segment; plain paths pass through (their absence is reported later). A path
 * that exists as typed is taken as it is even when it holds glob characters (`log[1].txt`), as a shell does.
 */
export function expandInputs(args: readonly string[], cwd: string): string[] {
  const out: string[] = [];
  for (const arg of args) {
    if (arg === '-' || !hasGlobSyntax(basename(arg)) || existsAsTyped(arg, cwd)) {
      out.push(arg);
      continue;
    }
    const dir = dirname(arg);
    const tokens = parseGlob(basename(arg));
    let names: string[];
    try {
      names = readdirSync(resolve(cwd, dir));
    } catch (cause) {
      throw new GpumemError('INPUT_NOT_FOUND', `${printable(arg)}: the folder ${printable(dir)} cannot be read`, { cause, hint: 'check the path of the glob' });
    }
    const matches = names.filter((n) => matchGlobCounted(tokens, n).matched).sort().map((n) => (dir === '.' && !arg.startsWith('./') ? n : join(dir, n)));
    if (matches.length === 0) {
      throw new GpumemError('INPUT_NOT_FOUND', `${printable(arg)}: no file matches`, {
        hint: 'check the pattern (* any text, ? one character, [abc] one of a set; a backslash takes the next character as it is) and quote it so the shell leaves it alone',
      });
    }
    out.push(...matches);
  }
  return out;
}

function existsAsTyped(path: string, cwd: string): boolean {
  try {
    statSync(resolve(cwd, path));
    return true;
  } catch {
    return false;
  }
}

/** An open log: a regular file (read by position) or a FIFO (read as a stream, like stdin). */
export interface OpenedInput {
  fd: number;
  /** Reads the next bytes of a FIFO (see fifoReader); null for a regular file. */
  fifo: ((buffer: Uint8Array) => number) | null;
}

/**
 * Opens a log for reading after checking its type: a missing path, a folder or a device (/dev/zero never
 * ends) is one clear error; a FIFO is opened without waiting for a writer, so one with no writer reads as
 * empty instead of hanging.
 */
export function openInput(path: string, cwd: string): OpenedInput {
  const full = resolve(cwd, path);
  let stat;
  try {
    stat = statSync(full);
  } catch (cause) {
    throw new GpumemError('INPUT_NOT_FOUND', `${path}: no such file`, { cause, hint: 'give a log file, a glob, or - for stdin' });
  }
  if (stat.isDirectory()) throw new GpumemError('INPUT_UNREADABLE', `${path} is a folder`, { hint: `give the log files in it, e.g. "${join(path, '*.log')}"` });
  const { fd, kind } = openInputFile(full, { what: 'log file', hint: 'give a log file, a glob, or - for stdin (pipe a device or stream into stdin if you mean it)' });
  return { fd, fifo: kind === 'fifo' ? fifoReader(fd) : null };
}

/**
 * Reads the input from `position` to its current end (a FIFO: to its end of stream), calling `onBytes` per
 * chunk; returns the new position. The chunk is a view of one reused buffer: `onBytes` must copy what it
 * keeps (the byte scanner does).
 */
export function readRange(input: OpenedInput, position: number, onBytes: (bytes: Buffer) => void): number {
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let pos = position;
  for (;;) {
    const n = input.fifo ? input.fifo(buffer) : readSync(input.fd, buffer, 0, CHUNK_BYTES, pos);
    if (n === 0) break;
    pos += n;
    onBytes(buffer.subarray(0, n));
  }
  return pos;
}

/** Reads a whole file through `onBytes` and closes it. */
export function readWhole(path: string, cwd: string, onBytes: (bytes: Buffer) => void): void {
  const input = openInput(path, cwd);
  try {
    readRange(input, 0, onBytes);
  } finally {
    closeSync(input.fd);
  }
}

/** Memory snapshots (`*.pickle`) in the folder of `path`, for a pointer to `gpumem snapshot`. */
export function snapshotsNear(path: string, cwd: string): string[] {
  if (path === '-') return [];
  const dir = dirname(path);
  try {
    return readdirSync(resolve(cwd, dir)).filter((n) => n.endsWith('.pickle')).sort().map((n) => join(dir, n));
  } catch {
    return [];
  }
}
