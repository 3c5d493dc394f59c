/**
 * Opening input files by type first. A path a user gives may name a FIFO (opening it blocks until a writer
 * comes), a device (/dev/zero never ends) or a folder; reading those the way a regular file is read hangs or
 * grows without bound. So the type is checked with stat before anything is opened: regular files are read
 * as before, FIFOs are opened without blocking and read up to a cap, devices, sockets and folders are refused
 * with one clear line.
 */
import { closeSync, constants, openSync, readSync, statSync, type Stats } from 'node:fs';
import { GpumemError } from '../../core/index.js';

export interface InputFileOptions {
  /** What the file is, for messages: "pipeline file", "recording". */
  what: string;
  /** The hint for a file of the wrong type or one that cannot be opened. */
  hint: string;
}

/** The kinds of path an input may name. */
export type InputKind = 'file' | 'fifo';

/**
 * Stats `path` and returns whether it is a regular file or a FIFO; anything else (folder, device, socket,
 * missing) is a GpumemError naming the path and its type.
 */
export function inputKind(path: string, options: InputFileOptions): InputKind {
  let st: Stats;
  try {
    st = statSync(path);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    throw new GpumemError(code === 'ENOENT' ? 'INPUT_NOT_FOUND' : 'INPUT_UNREADABLE', `${path}: ${code === 'ENOENT' ? 'no such file' : `cannot read the ${options.what} (${code ?? String(cause)})`}`, { hint: options.hint, cause });
  }
  if (st.isFile()) return 'file';
  if (st.isFIFO()) return 'fifo';
  const type = st.isDirectory() ? 'a folder' : st.isCharacterDevice() || st.isBlockDevice() ? 'a device' : st.isSocket() ? 'a socket' : 'not a regular file';
  throw new GpumemError('INPUT_UNREADABLE', `${path} is ${type}, not a ${options.what}`, { hint: options.hint });
}

/** Opens `path` for reading after checking its type; a FIFO is opened without waiting for a writer. */
export function openInputFile(path: string, options: InputFileOptions): { fd: number; kind: InputKind } {
  const kind = inputKind(path, options);
  try {
    const flags = kind === 'fifo' ? constants.O_RDONLY | constants.O_NONBLOCK : constants.O_RDONLY;
    return { fd: openSync(path, flags), kind };
  } catch (cause) {
    throw new GpumemError('INPUT_UNREADABLE', `${path}: cannot open the ${options.what} (${(cause as NodeJS.ErrnoException).code ?? String(cause)})`, { hint: options.hint, cause });
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** How long a FIFO opened without a writer waits for one (`cmd > fifo` started just after gpumem). */
export const FIFO_WRITER_WAIT_MS = 3000;

/**
 * A reader for a FIFO opened without blocking. Each call returns up to `buffer.length` bytes, waiting (in
 * 5 ms steps) while a writer is connected but silent; 0 is the end: the writer closed, or none came within
 * FIFO_WRITER_WAIT_MS of the first read. So a FIFO nobody writes to ends promptly instead of hanging.
 */
export function fifoReader(fd: number, waitForWriterMs = FIFO_WRITER_WAIT_MS): (buffer: Uint8Array) => number {
  let connected = false;
  let deadline = 0;
  return (buffer) => {
    if (deadline === 0) deadline = Date.now() + waitForWriterMs;
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buffer, 0, buffer.length, null);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        connected = true; // EAGAIN: a writer is there, it has not written yet.
        Atomics.wait(pause, 0, 0, 5);
        continue;
      }
      if (n > 0) {
        connected = true;
        return n;
      }
      // 0 with no writer yet: keep waiting for one, up to the deadline.
      if (connected || Date.now() >= deadline) return 0;
      Atomics.wait(pause, 0, 0, 5);
    }
  };
}

/**
 * Reads a whole input of at most `maxBytes` bytes: a regular file larger than that is refused before
 * reading, a FIFO is read until it ends or passes the cap (then refused). Returns the bytes.
 */
export function readInputBytes(path: string, maxBytes: number, options: InputFileOptions): Buffer {
  const { fd, kind } = openInputFile(path, options);
  const tooLarge = (): GpumemError =>
    new GpumemError('INPUT_TOO_LARGE', `${path}: ${options.what} larger than ${maxBytes} bytes`, { hint: options.hint });
  try {
    if (kind === 'file') {
      const size = statSync(path).size;
      if (size > maxBytes) throw tooLarge();
    }
    const chunks: Buffer[] = [];
    let total = 0;
    const chunk = Buffer.allocUnsafe(1 << 16);
    const fromFifo = kind === 'fifo' ? fifoReader(fd) : null;
    for (;;) {
      const n = fromFifo ? fromFifo(chunk) : readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw tooLarge();
      chunks.push(Buffer.from(chunk.subarray(0, n)));
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}
