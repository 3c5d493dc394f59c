/** `gpumem pipeline FILE.yaml`: stages with verified cleanup between them (docs/pipeline.md). */
import { resolve } from 'node:path';
import { GpumemError, isGpumemError } from '../../core/errors.js';
import { formatBytes, formatDuration } from '../../core/units.js';
import { printable } from '../../core/text.js';
import type { GpuSource } from '../../sources/index.js';
import { keepRunningOnBrokenPipe } from '../broken-pipe.js';
import { openSourceFromContext } from '../open-source.js';
import { SUPERVISE_FIELDS } from '../nvml-fields.js';
import { readInputBytes } from '../../sources/index.js';
import { beginPipeline, beginRun, completePipeline, completeRun } from '../../store/index.js';
import { parsePipeline, pipelineReportJson, resolveStageGpus, runPipeline, type CompanionPlugin, type PipelineReport, type PipelineSpec } from '../../supervise/index.js';
import type { CommandHandler } from '../context.js';
import type { PipelineOptions } from '../options/supervise.js';
import { painter, table } from '../render/style.js';
import { companionSettings, startCompanion, type CompanionChoice } from './companion.js';
import { closeHistory, historyWrite, tryHistory } from './history.js';

/** A pipeline file is a short YAML document; anything past this is not one. */
const MAX_PIPELINE_BYTES = 1024 * 1024;

function readPipelineFile(path: string): string {
  try {
    return readInputBytes(path, MAX_PIPELINE_BYTES, { what: 'pipeline file', hint: 'give a YAML pipeline file (see docs/pipeline.md)' }).toString('utf8');
  } catch (error) {
    if (isGpumemError(error)) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new GpumemError(code === 'ENOENT' ? 'INPUT_NOT_FOUND' : 'INPUT_UNREADABLE', `cannot read pipeline file ${path}: ${code ?? (error as Error).message}`, {
      hint: 'check the path', cause: error,
    });
  }
}

export const run: CommandHandler<PipelineOptions> = async (ctx) => {
  const o = ctx.args.options;
  const [file, ...extra] = ctx.args.positionals;
  if (file === undefined || extra.length > 0) throw new GpumemError('USAGE', 'gpumem pipeline takes exactly one FILE', { hint: 'e.g. gpumem pipeline examples/pipeline.yaml' });
  const path = resolve(ctx.cwd, file);
  const spec = parsePipeline(readPipelineFile(path), file);
  const toleranceBytes = spec.toleranceBytes ?? o.tolerance;
  if (o.check) {
    const checked = await checkGpusIfPossible(ctx, spec, o.gpus);
    ctx.stdout.write(`${file}: valid, ${spec.stages.length} stage(s)${checked}\n`);
    for (const s of spec.stages) ctx.stdout.write(`  ${printable(s.name)}: ${printable(s.argv.join(' '))}${s.gpus ? ` [gpus ${s.gpus}]` : ''}${s.batch ? ` [batch ${s.batch}]` : ''}\n`);
    return { kind: 'ok' };
  }
  keepRunningOnBrokenPipe();
  const settings = companionSettings(ctx);
  const source = await openSourceFromContext(ctx, SUPERVISE_FIELDS);
  const db = tryHistory(ctx);
  try {
    const startedAtMs = Date.now();
    let pipelineId: number | null = null;
    let companion: CompanionChoice = { plugin: null, runFolder: null };
    const plugins: CompanionPlugin[] = [];
    const report = await runPipeline({
      spec, file, source, toleranceBytes, from: o.from, gpus: o.gpus,
      run: { cwd: ctx.cwd, env: ctx.env, forwardSignals: true, subreaper: true, stdout: o.json ? ctx.stderr.stream : ctx.stdout.stream, stderr: ctx.stderr.stream, log: (l) => ctx.stderr.write(`gpumem: ${l}\n`), plugins },
      log: (l) => ctx.stderr.write(`gpumem: ${l}\n`),
      // Recorded only once every stage's GPUs are accepted: a refused pipeline leaves no history row.
      onReady: () => {
        pipelineId = db ? historyWrite(ctx, 'starting the record', () => beginPipeline(db, path, startedAtMs)) : null;
        companion = startCompanion(ctx, settings, { runId: null, startedAtMs, ...(pipelineId !== null ? { folderName: `pipeline-${pipelineId}` } : {}) });
        if (companion.plugin) plugins.push(companion.plugin);
      },
      onStageStart: (stage) => (db && pipelineId !== null ? historyWrite(ctx, 'starting a stage record', () => beginRun(db, { argv: stage.argv, cwd: ctx.cwd, startedAtMs: Date.now(), pipelineId: pipelineId!, stage: stage.name })) : null),
      onStageEnd: (runId, run, check) => db && runId !== null && historyWrite(ctx, 'storing a stage report', () => completeRun(db, runId, run, check)),
    });
    const json = pipelineReportJson(report);
    if (db && pipelineId !== null) historyWrite(ctx, 'storing the pipeline report', () => completePipeline(db, pipelineId!, report.status, report.durationMs, json));
    if (o.json) ctx.stdout.write(`${JSON.stringify({ ...json, pipelineId, runFolder: companion.runFolder }, null, 2)}\n`);
    else ctx.stderr.write(renderPipeline(report, ctx.color && ctx.stderr.isTTY));
    if (report.status === 'ok') return { kind: 'ok' };
    const failed = report.stages.find((s) => s.status === 'failed');
    return failed ? { kind: 'child', code: report.exit.code, signal: report.exit.signal } : { kind: 'failure' };
  } finally {
    closeHistory(ctx, db);
    source.close();
  }
};

/**
 * `--check`: stage GPUs are checked against the machine when a GPU source can be opened (a bad index is
 * the same usage error a real run gives); without GPU access only the file is checked, and the line says so.
 */
async function checkGpusIfPossible(ctx: Parameters<CommandHandler<PipelineOptions>>[0], spec: PipelineSpec, override: string | undefined): Promise<string> {
  let source: GpuSource;
  try {
    source = await openSourceFromContext(ctx);
  } catch (error) {
    if (isGpumemError(error) && error.errorClass === 'no-gpu') return ' (GPUs not checked: no GPU access)';
    throw error;
  }
  try {
    resolveStageGpus(spec.stages, await source.readSample(), override, spec.gpus);
    return `; GPUs checked against ${source.kind}`;
  } finally {
    source.close();
  }
}

/** The per-stage summary table printed at the end. */
export function renderPipeline(r: PipelineReport, color: boolean): string {
  const paint = painter(color);
  const rows = r.stages.map((s) => {
    const peaks = s.run?.peaks.map((p) => `GPU ${p.index} ${formatBytes(p.peakBytes)}`).join(', ') || '-';
    const after = s.check?.gpus.map((g) => `GPU ${g.index} ${g.deltaBytes === null ? 'n/a' : `${g.deltaBytes >= 0 ? '+' : ''}${formatBytes(g.deltaBytes)}`}`).join(', ') ?? '-';
    const exit = s.run ? (s.run.exit.signal ?? String(s.run.exit.code)) : '-';
    const state = s.status === 'ok' ? paint('green', 'ok') : s.status === 'skipped' || s.status === 'not-run' ? paint('gray', s.status) : paint('red', s.status);
    return [printable(s.name), state, exit, s.run ? formatDuration(s.run.durationMs) : '-', String(s.run?.retries ?? '-'), peaks, after];
  });
  const lines = table([['STAGE', 'STATUS', 'EXIT', 'DURATION', 'RETRIES', 'PEAK (tree)', 'MEMORY AFTER vs BEFORE'], ...rows], ['left', 'left', 'right', 'right', 'right']);
  const head = paint('bold', `gpumem pipeline ${printable(r.name)}: ${r.status === 'ok' ? paint('green', 'ok') : paint('red', 'failed')} in ${formatDuration(r.durationMs)} (cleanup tolerance ${formatBytes(r.toleranceBytes)})`);
  const reasons = r.stages.filter((s) => s.check?.reason).map((s) => `  ${printable(s.name)}: ${printable(s.check?.reason)}`);
  return `${[head, ...lines.map((l) => `  ${l}`), ...reasons].join('\n')}\n`;
}
