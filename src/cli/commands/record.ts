/** `gpumem record --out FILE`: samples the GPUs at an interval into a recording that --replay reads. */
import { GpumemError } from '../../core/errors.js';
import { createRecordingWriter } from '../../store/index.js';
import type { CommandHandler } from '../context.js';
import type { RecordOptions } from '../options/gpus.js';
import { untilInterrupted } from '../interrupt.js';
import { openSourceFromContext } from '../open-source.js';
import { RECORD_FIELDS } from '../nvml-fields.js';
import { refuseOutputOverInputs } from '../output-file.js';

export const run: CommandHandler<RecordOptions> = async (ctx) => {
  const o = ctx.args.options;
  if (o.out === undefined || o.out === '') {
    throw new GpumemError('USAGE', 'gpumem record needs --out FILE', { hint: 'e.g. gpumem record --out train.gpumem.ndjson' });
  }
  const intervalMs = o.interval;
  const durationMs = o.duration === undefined ? null : o.duration * 1000;
  // A recording written over the one it replays (or over the driver it loads) would destroy it.
  refuseOutputOverInputs('--out', o.out, [o.replay, o.nvmlLib], ctx.cwd);
  const source = await openSourceFromContext(ctx, RECORD_FIELDS);
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
