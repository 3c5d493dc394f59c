/**
 * The one reader of /proc/PID/stat and of the process table built from it. The host-fact enricher, the
 * supervisor's process tree, kill's pid-reuse check and cleanup all read parent, group, state and start
 * ticks here, so a pid judged "the same process" by one is judged the same by every other.
 */
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { parseCmdline, parseProcStatBytes, type ProcStat } from './parse.js';

export interface ProcRootOptions {
  /** Default "/proc"; tests point it at a prepared tree. */
  procRoot?: string;
}

// A stat line is a few hundred bytes. Reading it into one reused buffer costs open + read + close, where
// readFileSync adds an fstat, a second read to find the end of a size-0 file, and a fresh buffer per pid.
const statBuffer = Buffer.allocUnsafe(4096);

/**
 * Reads a small /proc file with one read into the shared buffer; returns the byte count (the file is in
 * statBuffer[0, count)), or -1 when it filled the buffer. Throws the filesystem error (ENOENT for a gone pid,
 * EACCES under hidepid) as readFileSync would.
 */
function readProcBytes(path: string): number {
  const fd = openSync(path, 'r');
  let bytes: number;
  try {
    bytes = readSync(fd, statBuffer, 0, statBuffer.length, null);
  } finally {
    closeSync(fd);
  }
  return bytes < statBuffer.length ? bytes : -1;
}

/**
 * The text of a small /proc file read with one read into a shared buffer; throws the filesystem error
 * (ENOENT for a gone pid, EACCES under hidepid) as readFileSync would. Falls back to readFileSync for a
 * file that fills the buffer.
 */
export function readProcText(path: string): string {
  const bytes = readProcBytes(path);
  return bytes >= 0 ? statBuffer.toString('utf8', 0, bytes) : readFileSync(path, 'utf8');
}

/**
 * An open /proc/PID/stat that can be read again and again (a watch loop's per-sample read: one pread instead
 * of open, read and close). The descriptor is bound to the process, not to the number: once the process has
 * exited a read fails (ESRCH) even if the kernel has given its pid to another process.
 */
export type StatHandle = ProcFileHandle<ProcStat>;

/** A /proc/PID file held open and parsed at each read, like StatHandle (statm for a live view's RSS). */
export interface ProcFileHandle<T> {
  /**
   * The file's value now, or null once the process is gone (then the handle is closed). Given the `round`
   * of an earlier prefetch, the bytes that prefetch read are parsed instead of reading again.
   */
  read(round?: number): T | null;
  /**
   * Reads the file now into this handle's own small buffer, for read(round) to parse. A sample's reads done
   * back to back and then its parsing cost less CPU than the two interleaved (each stays warm in the caches
   * the other would evict). A read with another round, or none, reads afresh.
   */
  prefetch(round: number): void;
  close(): void;
}

/** Bytes a prefetch reads: a stat line is a few hundred; a longer file is read afresh by read(). */
const PREFETCH_BYTES = 512;

/**
 * Parses the bytes a read left in `bytes[0, length)`; `previous` is this handle's last value (null at
 * first), which a parser may reuse parts of.
 */
export type ProcBytesParser<T> = (bytes: Buffer, length: number, previous: T | null) => T | null;

/**
 * One held file. A class, not a closure: the enricher walks thousands of these per sample, and one object
 * with its fields in place is one object to fetch from memory instead of an object and its closure's context.
 */
class HeldProcFile<T> implements ProcFileHandle<T> {
  private last: T | null = null;
  // The prefetched bytes (own[0, pendingBytes), -1 when that read failed) and the round they are for.
  private own: Buffer | null = null;
  private pendingBytes = 0;
  private pendingRound = -1;

  constructor(private fd: number | null, private readonly parse: ProcBytesParser<T>) {}

  read(round = -1): T | null {
    if (this.fd === null) return null;
    try {
      let buffer: Buffer = statBuffer;
      let bytes: number;
      const own = this.own;
      if (round >= 0 && round === this.pendingRound && own !== null && this.pendingBytes < own.length) {
        buffer = own;
        bytes = this.pendingBytes;
      } else bytes = readSync(this.fd, statBuffer, 0, statBuffer.length, 0);
      this.pendingRound = -1;
      const value = bytes > 0 && bytes < buffer.length ? this.parse(buffer, bytes, this.last) : null;
      if (value === null) this.close();
      else this.last = value;
      return value;
    } catch {
      this.close();
      return null;
    }
  }

  prefetch(round: number): void {
    if (this.fd === null) return;
    this.own ??= Buffer.allocUnsafe(PREFETCH_BYTES);
    try {
      this.pendingBytes = readSync(this.fd, this.own, 0, this.own.length, 0);
    } catch {
      this.pendingBytes = -1;
    }
    this.pendingRound = round;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    this.last = null;
    this.pendingRound = -1;
  }
}

/** Opens `/proc/PID/<name>` for repeated reads parsed by `parse`; throws the filesystem error like readFileSync. */
export function openProcFileHandle<T>(pid: number, name: string, parse: ProcBytesParser<T>, options: ProcRootOptions = {}): ProcFileHandle<T> {
  return new HeldProcFile(openSync(`${options.procRoot ?? '/proc'}/${pid}/${name}`, 'r'), parse);
}

/** Opens /proc/PID/stat for repeated reads; throws the filesystem error like readFileSync. */
export function openStatHandle(pid: number, options: ProcRootOptions = {}): StatHandle {
  return openProcFileHandle(pid, 'stat', parseProcStatBytes, options);
}

/** /proc/PID/stat parsed, or null when the pid is gone or unreadable. */
export function readProcStat(pid: number, options: ProcRootOptions = {}): ProcStat | null {
  try {
    const path = `${options.procRoot ?? '/proc'}/${pid}/stat`;
    const bytes = readProcBytes(path);
    if (bytes >= 0) return parseProcStatBytes(statBuffer, bytes);
    const whole = readFileSync(path);
    return parseProcStatBytes(whole, whole.length);
  } catch {
    return null;
  }
}

/**
 * The start time of `pid` in clock ticks after boot (/proc/PID/stat field 22), or null when it is gone.
 * Compare it with an earlier reading before signalling a pid: a different value means the pid was reused.
 */
export function readStartTicks(pid: number, options: ProcRootOptions = {}): number | null {
  return readProcStat(pid, options)?.startTicks ?? null;
}

/** Every pid visible in /proc now. */
export function listPids(options: ProcRootOptions = {}): number[] {
  let names: string[];
  try {
    names = readdirSync(options.procRoot ?? '/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const name of names) {
    const first = name.charCodeAt(0);
    if (first >= 48 && first <= 57) pids.push(Number(name));
  }
  return pids;
}

/** Every process visible in our PID namespace, by pid. Processes that exit mid-scan are skipped. */
export function readProcTable(options: ProcRootOptions = {}): Map<number, ProcStat> {
  const table = new Map<number, ProcStat>();
  for (const pid of listPids(options)) {
    const stat = readProcStat(pid, options);
    if (stat) table.set(pid, stat);
  }
  return table;
}

/** pid → its direct children, from one process table. */
export function childrenByParent(table: ReadonlyMap<number, ProcStat>): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const entry of table.values()) {
    const list = children.get(entry.ppid);
    if (list) list.push(entry.pid);
    else children.set(entry.ppid, [entry.pid]);
  }
  return children;
}

/** All descendants of `pid` in `table`, parents before children. */
export function descendantsOf(table: ReadonlyMap<number, ProcStat>, pid: number): number[] {
  const children = childrenByParent(table);
  const out: number[] = [];
  const seen = new Set<number>();
  const queue = [...(children.get(pid) ?? [])];
  for (let i = 0; i < queue.length; i++) {
    const next = queue[i]!;
    if (seen.has(next)) continue;
    seen.add(next);
    out.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return out;
}

/** /proc/PID/cmdline as argv; null when unreadable or empty (zombie, kernel thread). */
export function readCmdline(pid: number, options: ProcRootOptions = {}): string[] | null {
  try {
    return parseCmdline(readFileSync(`${options.procRoot ?? '/proc'}/${pid}/cmdline`, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * /proc/PID/environ (NUL-separated "NAME=value" entries, as the process was started); null when it cannot
 * be read (another user's process, or gone).
 */
export function readEnviron(pid: number, options: ProcRootOptions = {}): string | null {
  try {
    return readFileSync(`${options.procRoot ?? '/proc'}/${pid}/environ`, 'utf8');
  } catch {
    return null;
  }
}
