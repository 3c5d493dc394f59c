/** `gpumem status`: one sample (or a refreshing view with --watch) of every GPU and its processes. */
import type { Sample } from '../../core/types.js';
import type { CommandHandler, CommandContext } from '../context.js';
import type { StatusOptions } from '../options/gpus.js';
import { sourceOptionsFromContext } from '../open-source.js';
import { openSource } from '../../sources/open.js';
import { statusFields } from '../nvml-fields.js';
import { renderStatus, statusJson } from '../render/status.js';
import { untilInterrupted } from '../interrupt.js';

function show(ctx: CommandContext<StatusOptions>, sample: Sample, watching: boolean): void {
  if (ctx.args.options.json) {
    ctx.stdout.write(`${JSON.stringify(statusJson(sample))}\n`);
    return;
  }
  // On a terminal a watch redraws in place, fitted to its height (one line spare: the last newline would scroll);
  // elsewhere frames follow each other whole, separated by a blank line.
  const inPlace = watching && ctx.stdout.isTTY;
  const rows = (ctx.stdout.stream as { rows?: number }).rows;
  const maxLines = inPlace && rows !== undefined && rows > 1 ? rows - 1 : undefined;
  const text = renderStatus(sample, { columns: ctx.stdout.columns, color: ctx.color, ...(maxLines === undefined ? {} : { maxLines }) });
  ctx.stdout.write(inPlace ? `\u001b[H\u001b[2J${text}` : text);
}

/**
 * The refreshing table re-reads a known process's state and parent from /proc in a round every 5 s, not every
 * sample: at 8 GPUs × 64 processes the 512 stat reads were half of each refresh's CPU, and the table shows a
 * state only as its zombie mark. Between rounds a steady machine's rows are the previous sample's objects.
 * --json keeps every field fresh in every sample.
 */
const TABLE_RESTAT_EVERY_MS = 5000;

export const run: CommandHandler<StatusOptions> = async (ctx) => {
  const { json, watch } = ctx.args.options;
  // The table reads only the /proc facts it shows (ProcOptions.tableFactsOnly); --json carries them all.
  const proc = json ? {} : { proc: { tableFactsOnly: true, ...(watch ? { restatEveryMs: TABLE_RESTAT_EVERY_MS, reuseRows: true } : {}) } };
  const source = await openSource({ ...sourceOptionsFromContext(ctx, statusFields(json, watch)), ...proc });
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
