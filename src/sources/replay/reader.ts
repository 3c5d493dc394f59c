/** Reading recordings: all at once (diagnose windows) or one sample per readSample (a replay source). */
import { readInputBytes } from '../files/index.js';
import { GpumemError } from '../../core/errors.js';
import type { Sample } from '../../core/types.js';
import type { GpuSource } from '../source.js';
import { createLineDecoder, parseRecordingHeader, type RecordingHeader } from './format.js';

export interface Recording {
  header: RecordingHeader;
  samples: Sample[];
}

const MAX_BYTES = 2 * 1024 ** 3;

function readText(path: string): string {
  try {
    // Type first: a FIFO is read up to the cap, a device such as /dev/zero is refused before any read.
    const bytes = readInputBytes(path, MAX_BYTES, { what: 'recording', hint: 'give --replay a file made by `gpumem record --out FILE` (record a shorter window if it is over 2 GiB)' });
    return bytes.toString('utf8');
  } catch (error) {
    if (error instanceof GpumemError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new GpumemError('INPUT_NOT_FOUND', `${path}: no such recording`, { hint: 'check the path given to --replay', cause: error });
    throw new GpumemError('INPUT_UNREADABLE', `${path}: cannot read recording (${code ?? String(error)})`, {
      hint: 'give --replay a readable file made by `gpumem record --out FILE`', cause: error,
    });
  }
}

/**
 * Reads a whole recording: header and samples in file order, each sample's source set to this replay.
 * Blank lines are skipped; a cut-off last line (a recorder killed mid-write) is dropped, any other bad line
 * throws GpumemError('INPUT_MALFORMED') with its line number.
 */
export function readRecording(path: string): Recording {
  const lines = readText(path).split('\n');
  if (lines.length === 0 || lines[0]!.trim() === '') {
    throw new GpumemError('INPUT_MALFORMED', `${path}:1: empty file, expected a recording header`, { hint: 'record one with `gpumem record --out FILE`' });
  }
  const header = parseRecordingHeader(lines[0]!, path);
  const endsCleanly = lines[lines.length - 1] === '';
  const decode = createLineDecoder(header, path);
  const samples: Sample[] = [];
  for (let i = 1; i < lines.length; i++) {
    const text = lines[i]!;
    if (text.trim() === '') continue;
    const last = i === lines.length - 1;
    try {
      const sample = decode(text, i + 1);
      if (sample) samples.push(asReplay(sample, path, header));
    } catch (error) {
      if (last && !endsCleanly) break;
      throw error;
    }
  }
  return { header, samples };
}

function asReplay(sample: Sample, path: string, header: RecordingHeader): Sample {
  const was = sample.source?.kind ? ` (recorded via ${sample.source.kind})` : '';
  const note = `recorded ${new Date(header.createdMs).toISOString()}${header.host?.hostname ? ` on ${header.host.hostname}` : ''}${header.note ? `: ${header.note}` : ''}`;
  return { ...sample, source: { kind: 'replay', detail: `${path}${was}`, note } };
}

/** A replay source: also tells how far playback has got. */
export interface ReplaySource extends GpuSource {
  readonly header: RecordingHeader;
  readonly sampleCount: number;
  /** Samples not yet returned by readSample. */
  remaining(): number;
  /** The recorded time of the sample readSample returns next, or null after the last (pacing a replay). */
  nextTimeMs(): number | null;
  /** Moves so that readSample returns sample `index` next (clamped to the recording); returns that index. */
  seek(index: number): number;
}

/** True for a source that plays a recording (it can be paced and sought). */
export function isReplaySource(source: GpuSource): source is ReplaySource {
  return source.kind === 'replay' && typeof (source as Partial<ReplaySource>).seek === 'function';
}

/**
 * Opens a recording as a GpuSource: readSample returns its samples in order (already enriched when
 * recorded; they are not re-read from this machine's /proc) and throws GpumemError('FAILED') after the last.
 */
export function openReplaySource(path: string): ReplaySource {
  const { header, samples } = readRecording(path);
  if (samples.length === 0) throw new GpumemError('INPUT_MALFORMED', `${path}: the recording holds no samples`, { hint: 'record for longer' });
  let next = 0;
  return {
    kind: 'replay',
    header,
    sampleCount: samples.length,
    remaining: () => samples.length - next,
    nextTimeMs: () => samples[next]?.timeMs ?? null,
    seek(index: number): number {
      next = Math.max(0, Math.min(samples.length - 1, Math.trunc(index)));
      return next;
    },
    async readSample(): Promise<Sample> {
      const sample = samples[next];
      if (!sample) throw new GpumemError('FAILED', `${path}: end of recording after ${samples.length} samples`);
      next++;
      return sample;
    },
    close(): void {
      next = samples.length;
    },
  };
}
