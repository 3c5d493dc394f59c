/**
 * Reads a PyTorch memory snapshot from a file (`gpumem snapshot`, `gpumem serve`) or from bytes already in
 * memory (an upload to `gpumem serve`). Pickles are streamed through the columnar snapshot reader in
 * 8 MiB chunks (so a multi-GB file never sits in memory, as bytes or as objects), JSON snapshots are parsed
 * whole. Errors name the file.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { GpumemError, isGpumemError } from '../core/errors.js';
import { readSnapshot } from '../core/snapshot/model.js';
import { SnapshotReader } from '../core/snapshot/snapshot-reader.js';
import type { MemorySnapshot } from '../core/snapshot/model-types.js';
import type { PickleValue } from '../core/snapshot/unpickle-types.js';
import { inputKind } from './files/input-file.js';

const CHUNK_BYTES = 8 * 1024 * 1024;
/** JSON is parsed as one string, and V8 strings stop at about 512 MiB. */
const MAX_JSON_BYTES = 500 * 1024 * 1024;

/** Reads and models the snapshot at `path`; every failure is a GpumemError whose message starts with the path. */
export function readSnapshotFile(path: string): MemorySnapshot {
  // Type first: opening a FIFO would block until a writer comes, and a snapshot is read by position anyway.
  if (inputKind(path, { what: 'snapshot', hint: 'give the path of a file written by torch.cuda.memory._dump_snapshot()' }) !== 'file') {
    throw new GpumemError('INPUT_UNREADABLE', `${path} is a FIFO, not a snapshot file`, { hint: 'save the snapshot to a file first, then give its path' });
  }
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new GpumemError(code === 'ENOENT' ? 'INPUT_NOT_FOUND' : 'INPUT_UNREADABLE', `${path}: ${code === 'ENOENT' ? 'no such file' : `cannot open (${code ?? 'error'})`}`, {
      hint: 'give the path of a file written by torch.cuda.memory._dump_snapshot()',
      cause: error,
    });
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new GpumemError('INPUT_UNREADABLE', `${path}: not a regular file`, { hint: 'give the path of a snapshot file' });
    const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(1, stat.size)));
    const first = readSync(fd, buffer, 0, buffer.length, 0);
    if (looksLikeJson(buffer.subarray(0, first))) return readSnapshot(readJson(fd, path, stat.size), stat.size);
    return readPickle(fd, buffer, first, stat.size);
  } catch (error) {
    if (isGpumemError(error) && !error.message.startsWith(path)) {
      throw new GpumemError(error.code, `${path}: ${error.message}`, { hint: error.hint, details: { file: path, ...error.details }, cause: error });
    }
    throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * Models a snapshot held in memory (an upload): the same data-only reader as for files, so nothing in the
 * bytes is executed. `label` names the input in error messages (it is printed, so it must be printable).
 */
export function readSnapshotBytes(bytes: Uint8Array, label: string): MemorySnapshot {
  try {
    if (looksLikeJson(bytes.subarray(0, CHUNK_BYTES))) {
      if (bytes.length > MAX_JSON_BYTES) throw new GpumemError('INPUT_TOO_LARGE', `${label}: JSON snapshots over ${MAX_JSON_BYTES / 1024 / 1024} MiB cannot be read`);
      let value: PickleValue;
      try {
        value = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8')) as PickleValue;
      } catch (error) {
        throw new GpumemError('INPUT_MALFORMED', `${label}: not valid JSON (${(error as Error).message})`, { hint: 'the file is damaged or not a snapshot' });
      }
      return readSnapshot(value, bytes.length);
    }
    const reader = new SnapshotReader(bytes.length);
    for (let at = 0; at < bytes.length && !reader.done; at += CHUNK_BYTES) reader.push(bytes.subarray(at, at + CHUNK_BYTES));
    return reader.finish();
  } catch (error) {
    if (isGpumemError(error) && !error.message.startsWith(label)) {
      throw new GpumemError(error.code, `${label}: ${error.message}`, { hint: error.hint, details: { file: label, ...error.details }, cause: error });
    }
    throw error;
  }
}

function readPickle(fd: number, buffer: Buffer, firstBytes: number, totalBytes: number): MemorySnapshot {
  const u = new SnapshotReader(totalBytes);
  let got = firstBytes;
  let position = firstBytes;
  while (got > 0 && !u.done) {
    u.push(buffer.subarray(0, got));
    got = readSync(fd, buffer, 0, buffer.length, position);
    position += got;
  }
  return u.finish();
}

function looksLikeJson(head: Uint8Array): boolean {
  for (const byte of head) {
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue;
    return byte === 0x7b || byte === 0x5b; // "{" or "["
  }
  return false;
}

function readJson(fd: number, path: string, size: number): PickleValue {
  if (size > MAX_JSON_BYTES) {
    throw new GpumemError('INPUT_TOO_LARGE', `${path}: JSON snapshots over ${MAX_JSON_BYTES / 1024 / 1024} MiB cannot be read`, {
      hint: 'write the snapshot as a pickle (torch.cuda.memory._dump_snapshot), which gpumem streams at any size',
    });
  }
  const bytes = Buffer.alloc(size);
  let at = 0;
  while (at < size) {
    const n = readSync(fd, bytes, at, size - at, at);
    if (n === 0) break;
    at += n;
  }
  try {
    return JSON.parse(bytes.subarray(0, at).toString('utf8')) as PickleValue;
  } catch (error) {
    throw new GpumemError('INPUT_MALFORMED', `${path}: not valid JSON (${(error as Error).message})`, { hint: 'the file is damaged or not a snapshot' });
  }
}
