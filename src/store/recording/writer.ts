/**
 * Writing recordings (format in docs/recording.md, parsed by sources/replay). Each sample, with the host
 * facts it is the first to need, is written with a single append, so a recorder killed mid-run leaves every
 * earlier sample readable: a sample is a keyframe or a delta against the sample before, and a reader
 * rebuilds every sample up to the last whole line.
 */
import { closeSync, writeSync } from 'node:fs';
import { hostname, platform, release } from 'node:os';
import { GpumemError } from '../../core/errors.js';
import type { Sample } from '../../core/types.js';
import { detectContainer } from '../../sources/procfs/index.js';
import { createNewFile } from '../new-file.js';
import { DEFAULT_KEYFRAMES, HOST_FACTS_KEY, RECORDING_FORMAT, RECORDING_VERSION, createRecordingEncoder, type KeyframePolicy, type RecordingHeader, type RecordingHostInfo } from '../../sources/replay/index.js';

export interface RecordingWriter {
  readonly path: string;
  /** Appends one sample as one line. */
  write(sample: Sample): void;
  /** Samples written so far. */
  readonly count: number;
  /** Of those, the ones written whole (keyframes); the others are deltas. */
  readonly keyframes: number;
  /** Closes the file; safe to call twice. */
  close(): void;
}

export interface RecordingWriterOptions {
  note?: string | null;
  intervalMs?: number | null;
  /** Overrides for tests; default: now. */
  createdMs?: number;
  writer?: string;
  /** When to write a whole sample instead of a delta (default DEFAULT_KEYFRAMES: 600 samples or 10 minutes). */
  keyframes?: KeyframePolicy;
}

/** What the header says about this machine. */
export function currentHostInfo(): RecordingHostInfo {
  return { hostname: hostname() || null, platform: platform(), kernel: release() || null, inContainer: detectContainer() };
}

/**
 * Creates `path` (replacing a regular file of the user's, never writing through a link: store/new-file.ts)
 * and writes the header line. Throws GpumemError('INPUT_UNSAFE') for a link or another user's file there,
 * and GpumemError('INPUT_UNREADABLE') when the file cannot be created, naming the path and the system's reason.
 */
export function createRecordingWriter(path: string, options: RecordingWriterOptions = {}): RecordingWriter {
  let fd: number | null;
  try {
    fd = createNewFile(path, { label: '--out' });
  } catch (error) {
    if (error instanceof GpumemError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new GpumemError('INPUT_UNREADABLE', `${path}: cannot create recording (${code ?? String(error)})`, {
      hint: 'choose a writable path for --out', cause: error,
    });
  }
  const keyframes = options.keyframes ?? DEFAULT_KEYFRAMES;
  const header: RecordingHeader = {
    format: RECORDING_FORMAT,
    version: RECORDING_VERSION,
    createdMs: options.createdMs ?? Date.now(),
    writer: options.writer ?? 'gpumem',
    host: currentHostInfo(),
    note: options.note ?? null,
    intervalMs: options.intervalMs ?? null,
    keyframes: { everySamples: keyframes.everySamples, everyMs: keyframes.everyMs },
  };
  writeSync(fd, `${JSON.stringify(header)}\n`);
  const encode = createRecordingEncoder(keyframes);
  let count = 0;
  let keyframeCount = 0;
  return {
    path,
    get count() {
      return count;
    },
    get keyframes() {
      return keyframeCount;
    },
    /** Appends `sample`, which must not be changed afterwards: the next sample is written as what changed since it. */
    write(sample: Sample): void {
      if (fd === null) throw new GpumemError('FAILED', `${path}: recording already closed`);
      const { definitions, line, keyframe } = encode(sample);
      // New host facts and the sample that first uses them go out in one write: a recorder killed between
      // two writes never leaves a sample whose facts are missing.
      const defs = definitions ? `${JSON.stringify({ [HOST_FACTS_KEY]: definitions })}\n` : '';
      writeSync(fd, `${defs}${JSON.stringify(line)}\n`);
      count++;
      if (keyframe) keyframeCount++;
    },
    close(): void {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}
