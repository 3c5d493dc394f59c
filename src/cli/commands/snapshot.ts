/**
 * `gpumem snapshot FILE` and `gpumem snapshot diff A B`: read PyTorch memory snapshots with the data-only
 * reader and print the analyses as text, JSON (schema in docs/snapshot.md) and optionally an HTML file.
 */
import { basename, resolve } from 'node:path';
import { GpumemError } from '../../core/errors.js';
import { diffSnapshots } from '../../core/snapshot/report.js';
import { analyseSnapshot, snapshotAnalysisJson, toJsonText } from '../../orchestrate/snapshot-analysis.js';
import type { CommandHandler } from '../context.js';
import type { SnapshotOptions } from '../options/files.js';
import { renderSnapshotHtml } from '../render/snapshot-html.js';
import { refuseOutputOverInputs, writeUserFile } from '../output-file.js';
import { renderDiffText, renderSnapshotText } from '../render/snapshot-text.js';
import { readSnapshotFile } from '../../sources/snapshot-file.js';
import { renderSimulationText } from '../render/snapshot-simulation.js';

function toJson(value: unknown): string {
  return `${toJsonText(value, 2)}\n`;
}

export const run: CommandHandler<SnapshotOptions> = async (ctx) => {
  const { positionals, options } = ctx.args;
  const top = options.top;
  const at = (p: string): string => resolve(ctx.cwd, p);
  if (positionals[0] === 'diff') {
    if (positionals.length !== 3) {
      throw new GpumemError('USAGE', 'snapshot diff needs two files: gpumem snapshot diff A B', { hint: 'see gpumem snapshot --help' });
    }
    // A diff has no page and no request check; ignoring these would leave the user waiting for a file never written.
    const unused = (['html', 'request'] as const).filter((k) => options[k] !== undefined);
    if (unused.length > 0) {
      throw new GpumemError('USAGE', `snapshot diff does not take ${unused.map((k) => `--${k}`).join(' or ')}`, {
        hint: 'use them on one snapshot: gpumem snapshot FILE --html OUT --request BYTES',
      });
    }
    const diff = diffSnapshots(readSnapshotFile(at(positionals[1] as string)), readSnapshotFile(at(positionals[2] as string)));
    ctx.stdout.write(options.json ? toJson(diff) : renderDiffText(diff, top, ctx.stdout.columns, ctx.color));
    return { kind: 'ok' };
  }
  if (positionals.length !== 1) {
    throw new GpumemError('USAGE', positionals.length === 0 ? 'gpumem snapshot needs a FILE' : `gpumem snapshot takes one FILE, got ${positionals.length}`, {
      hint: 'gpumem snapshot FILE, or gpumem snapshot diff A B',
    });
  }
  const file = positionals[0] as string;
  if (options.html !== undefined) refuseOutputOverInputs('--html', options.html, [file], ctx.cwd);
  const snapshot = readSnapshotFile(at(file));
  const requestBytes = options.request ?? null;
  const analysis = analyseSnapshot(snapshot, { top, requestBytes, whatIfs: options.whatIf ?? [], simulate: options.simulate, torchVersion: options.torchVersion ?? null });
  const { report, simulations: sims } = analysis;
  if (options.html !== undefined) {
    // Rendered outside the try: a rendering fault is a bug and must not be reported as an unwritable path.
    const page = renderSnapshotHtml(report, basename(file));
    // The path is the user's input, so a path that cannot be written is bad input (exit 2), not a failure.
    writeUserFile(at(options.html), page, '--html', options.html);
  }
  if (options.json) {
    ctx.stdout.write(toJson(snapshotAnalysisJson(analysis)));
  } else {
    ctx.stdout.write(renderSnapshotText(report, ctx.stdout.columns, ctx.color));
    if (sims) ctx.stdout.write(renderSimulationText(sims, options.simulate));
  }
  if (options.html !== undefined && !options.json) ctx.stdout.write(`HTML report: ${options.html}\n`);
  return { kind: 'ok' };
};
