/** `gpumem status`: one sample (or a refreshing view with --watch) of every GPU and its processes. */
import type { Sample } from '../../core/types.js';
import type { CommandHandler, CommandContext } from '../context.js';
import type { StatusOptions } from '../options/gpus.js';
import { openSourceFromContext } from '../open-source.js';
import { statusFields } from '../nvml-fields.js';
import { renderStatus, statusJson } from '../render/status.js';
import { untilInterrupted } from '../interrupt.js';

function show(ctx: CommandContext<StatusOptions>, sample: Sample, watching: boolean): void {
  if (ctx.args.options.json) {
    ctx.stdout.write(`${JSON.stringify(statusJson(sample))}\n`);
    return;
  }
  const text = renderStatus(sample, { columns: ctx.stdout.columns, color: ctx.color });
  // On a terminal a watch redraws in place; elsewhere frames follow each other, separated by a blank line.
  ctx.stdout.write(watching && ctx.stdout.isTTY ? `\u001b[H\u001b[2J${text}` : text);
}

export const run: CommandHandler<StatusOptions> = async (ctx) => {
  const source = await openSourceFromContext(ctx, statusFields(ctx.args.options.json, ctx.args.options.watch));
  try {
    if (!ctx.args.options.watch) {
      show(ctx, await source.readSample(), false);
      return { kind: 'ok' };
    }
    const intervalMs = ctx.args.options.interval;
    await untilInterrupted(async (stopped) => {
      let first = true;
      while (!stopped()) {
        if (source.kind === 'replay' && 'remaining' in source && (source as { remaining(): number }).remaining() === 0) break;
        const sample = await source.readSample();
        if (!first && !ctx.stdout.isTTY && !ctx.args.options.json) ctx.stdout.write('\n');
        show(ctx, sample, true);
        first = false;
        await stopped.sleep(intervalMs);
      }
    });
    return { kind: 'ok' };
  } finally {
    source.close();
  }
};
