/**
 * `gpumem doctor` (also the bare `gpumem`): the status table and the findings in one screen. Live, the
 * table of the first sample is printed at once and the findings when the sampling window ends (on a
 * terminal a progress line on stderr counts the window down meanwhile). Without any GPU access it shows
 * the bundled example recording and says so in its first line; with --json it does not (exit 3, as diagnose).
 * It exits 1 only for a critical finding (--exit-code: for any), unlike diagnose, so `gpumem && …` goes on.
 */
import type { Sample } from '../../core/types.js';
import { printable } from '../../core/text.js';
import { painter } from '../render/style.js';
import type { CommandContext, CommandHandler } from '../context.js';
import type { DoctorOptions } from '../options/gpus.js';
import { reportJson } from '../diagnose/json.js';
import { describeWindow, renderFindings } from '../diagnose/render.js';
import { outcomeOf, runDiagnosis, SAMPLE_INTERVAL_MS, type Diagnosed } from '../diagnose/run.js';
import { renderStatus } from '../render/status.js';

const statusTable = (ctx: CommandContext<DoctorOptions>, sample: Sample): string => renderStatus(sample, { columns: ctx.stdout.columns, color: ctx.color }).trimEnd();

/** Prints the first sample's table as soon as it is read; returns whether it did and a cleanup for the progress line. */
function earlyStatus(ctx: CommandContext<DoctorOptions>): { onSample: (sample: Sample, index: number, count: number) => void; printed: () => boolean; done: () => void } {
  let printed = false;
  let progress = false;
  const paint = painter(ctx.color);
  return {
    onSample: (sample, index, count) => {
      // A single-sample window has nothing to wait for: print everything together at the end.
      if (count <= 1) return;
      if (index === 0) {
        const seconds = ((count - 1) * SAMPLE_INTERVAL_MS) / 1000;
        ctx.stdout.write(`gpumem doctor: GPUs now; findings after a ${seconds} s window\n${statusTable(ctx, sample)}\n`);
        printed = true;
      }
      if (ctx.stderr.isTTY && index < count - 1) {
        ctx.stderr.write(`\r\x1b[2K${paint('gray', `sampling ${index + 1}/${count}…`)}`);
        progress = true;
      }
    },
    printed: () => printed,
    done: () => {
      if (progress) ctx.stderr.write('\r\x1b[2K');
    },
  };
}

/**
 * What the example recording is, for doctor's first line: "synthetic" when its note says so, otherwise the GPUs it
 * was recorded on and the day (UTC), e.g. "recorded on an NVIDIA H100 80GB HBM3 on 2026-11-27", so nobody takes
 * its processes for their own or its numbers for made up.
 */
export function describeExample(collected: Diagnosed['collected']): string {
  if (/synthetic/i.test(collected.recordingNote ?? '')) return 'synthetic';
  const names = new Map<string, string>();
  for (const sample of collected.input.samples) for (const d of sample.devices) names.set(d.uuid ?? `index ${d.index}`, printable(d.name ?? 'unknown GPU'));
  const counts = new Map<string, number>();
  for (const name of names.values()) counts.set(name, (counts.get(name) ?? 0) + 1);
  const gpus = [...counts].map(([name, n]) => (n > 1 ? `${n}× ${name}` : `${/^(nvidia|[aeiou])/i.test(name) ? 'an' : 'a'} ${name}`));
  const on = gpus.length > 0 ? ` on ${gpus.join(' and ')}` : '';
  const day = collected.recordingCreatedMs === null ? '' : ` on ${new Date(collected.recordingCreatedMs).toISOString().slice(0, 10)}`;
  return `recorded${on}${day}`;
}

export const run: CommandHandler<DoctorOptions> = async (ctx) => {
  const json = Boolean(ctx.args.options.json);
  const early = json ? null : earlyStatus(ctx);
  let diagnosed;
  try {
    // The example is for a person's screen only: a JSON document is read by scripts, which must never act on
    // another machine's trainer and workers as if they were this one's, so --json without GPU access exits 3 instead.
    diagnosed = await runDiagnosis(ctx, !json, early?.onSample);
  } finally {
    early?.done();
  }
  const { report, collected, fallback } = diagnosed;
  if (json) {
    ctx.stdout.write(`${JSON.stringify(reportJson(report, 'doctor', fallback, collected.recordingNote), null, 2)}\n`);
    return outcomeOf(report, !ctx.args.options.exitCode);
  }
  const paint = painter(ctx.color);
  const lines: string[] = [];
  if (fallback) {
    lines.push(paint('yellow', `No GPU access on this machine: showing the bundled example recording (examples/doctor-example.ndjson, ${describeExample(collected)}), not your GPUs.`));
    lines.push(paint('gray', `why: ${fallback.reason}`));
  } else if (early?.printed()) {
    lines.push('', `findings: ${describeWindow(report)}`);
  } else {
    lines.push(`gpumem doctor: ${describeWindow(report)}`);
  }
  if (!early?.printed() || fallback) {
    // The status table is the one `gpumem status` prints, for the latest sample of the window.
    const latest = collected.input.samples[collected.input.samples.length - 1]!;
    lines.push(statusTable(ctx, latest));
  }
  lines.push('', ...renderFindings(report.findings, paint, ctx.stdout.columns, true));
  lines.push('', paint('gray', 'evidence for each finding and the byte-by-byte accounting: gpumem diagnose'));
  ctx.stdout.write(`${lines.join('\n')}\n`);
  return outcomeOf(report, !ctx.args.options.exitCode);
};
