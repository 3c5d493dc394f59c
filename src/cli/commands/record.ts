/** `gpumem record --out FILE`: samples the GPUs at an interval into a recording that --replay reads. */
import { GpumemError } from '../../core/errors.js';
import { createRecordingWriter } from '../../store/index.js';
import type { CommandHandler } from '../context.js';
import type { RecordOptions } from '../options/gpus.js';
import { untilInterrupted } from '../interrupt.js';
import { sourceOptionsFromContext } from '../open-source.js';
import { openSource } from '../../sources/index.js';
import { RECORD_FIELDS } from '../nvml-fields.js';
import { refuseOutputOverInputs } from '../output-file.js';

/**
 * A known process's state, parent and CPU ticks are re-read from /proc in a round every 30 s, not every
 * sample: 512 stat reads a second were most of a 1 Hz recording's own CPU, and a round every 5 s (each one
 * dates, and so re-encodes, every row) still was; halving the rounds from every 15 s took 0.016 % of a core
 * off a steady recorder at 8 GPUs × 64 processes (docs/nvml.md). Each reading is dated (`cpuTicksAtMs`), so a
 * replay tells one reading from two and says "CPU use unknown", never "idle", over a stretch shorter than a
 * round; watch's 65-s findings window holds two, as it does live, where watch re-reads the rows off screen
 * at the same period. A process that leaves the GPU is forgotten at once. Between rounds a steady machine's
 * rows are the previous sample's objects, and the encoder hands back their encoded form.
 */
const RESTAT_EVERY_MS = 30_000;

export const run: CommandHandler<RecordOptions> = async (ctx) => {
  const o = ctx.args.options;
  if (o.out === undefined || o.out === '') {
    throw new GpumemError('USAGE', 'gpumem record needs --out FILE', { hint: 'e.g. gpumem record --out train.gpumem.ndjson' });
  }
  const intervalMs = o.interval;
  const durationMs = o.duration === undefined ? null : o.duration * 1000;
  // A recording written over the one it replays (or over the driver it loads) would destroy it.
  refuseOutputOverInputs('--out', o.out, [o.replay, o.nvmlLib], ctx.cwd);
  const source = await openSource({ ...sourceOptionsFromContext(ctx, RECORD_FIELDS), proc: { restatEveryMs: RESTAT_EVERY_MS, reuseRows: true } });
  const writer = createRecordingWriter(o.out, { note: o.note ?? null, intervalMs });
  const startMs = Date.now();
  try {
    ctx.stderr.write(`recording to ${o.out} every ${intervalMs} ms${durationMs === null ? ' until Ctrl-C' : ` for ${durationMs / 1000} s`}\n`);
    await untilInterrupted(async (stopped) => {
      while (!stopped()) {
        const tickMs = Date.now();
        if (source.kind === 'replay' && 'remaining' in source && (source as { remaining(): number }).remaining() === 0) break;
        writer.write(await source.readSample());
        if (durationMs !== null && Date.now() - startMs + intervalMs > durationMs) break;
        await stopped.sleep(Math.max(0, intervalMs - (Date.now() - tickMs)));
      }
    });
  } finally {
    writer.close();
    source.close();
  }
  ctx.stderr.write(`wrote ${writer.count} sample${writer.count === 1 ? '' : 's'} to ${o.out}\n`);
  return { kind: 'ok' };
};
