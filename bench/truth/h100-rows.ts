/**
 * Trace mode and config mode against every row measured on the H100 (bench/results/2026-11-27-h100-80gb,
 * estimate-accuracy/accuracy.jsonl): the same training configs of bench/gpu/accuracy_model.py, traced here on
 * the CPU and estimated from their config files, each error printed for `max_memory_allocated` (the tracer or the
 * activation model), `max_memory_reserved` (the allocator simulator or the slack rule) and NVML's process memory
 * at the peak (the nvidia-smi figure, which adds the context) separately, so a miss says where it comes from.
 *
 * A measured run froze what its own transformers release matched: the kit's ViT prefixes used transformers 4
 * names that 5.x renamed, so the "frozen" ViT run trained every block but the embeddings (the kit now renames or
 * refuses). Each row is estimated with the prefixes that reproduce the run's own trainable-parameter count, or
 * not at all.
 */
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gpumemJson } from './methods.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const RESULTS = join(ROOT, 'bench/results/2026-11-27-h100-80gb/estimate-accuracy');
/** The renames accuracy_model.py applies: a prefix under the old name matched nothing on transformers 5. */
const RENAMED = ['vit.encoder.layer.'];

interface Run { maxAllocatedBytes: number; maxReservedBytes: number; nvmlPeakBytes: number; trainableParams: number }
interface Row { config: string; setup: { batch: number; freeze: string[] }; measured: Run; estimate: { argv: string[] } }

/** One method's three figures, or why it has none. */
export type Figures = { allocated: number; reserved: number; smi: number } | { unavailable: string };

export interface H100Result { config: string; batch: number; freeze: string[]; measured: Run; trace: Figures; config_: Figures }

function rows(): Row[] {
  return readFileSync(join(RESULTS, 'accuracy.jsonl'), 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Row);
}

/** Config mode's arguments as the kit ran them, with the committed input file and the H100 named instead of `auto`. */
function configArgs(row: Row, freeze: string[]): string[] {
  const argv = row.estimate.argv.slice(row.estimate.argv.indexOf('estimate') + 1).filter((a) => a !== '--json');
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--gpu' || a === '--freeze') i++;
    else out.push(a.endsWith('.json') || a.endsWith('.safetensors') ? join(RESULTS, 'inputs', basename(a)) : a);
  }
  return [...out, '--gpu', 'H100-80GB', ...(freeze.length ? ['--freeze', freeze.join(',')] : [])];
}

/** The prefixes the measured run really froze: the row's list, else the list without renamed names. */
function appliedFreeze(row: Row): { freeze: string[]; report: Record<string, unknown> } | string {
  const candidates = [row.setup.freeze, row.setup.freeze.filter((p) => !RENAMED.some((r) => p.startsWith(r)))];
  for (const freeze of candidates) {
    const report = gpumemJson(configArgs(row, freeze), 120_000);
    if (typeof report === 'string') return report;
    if ((report.model as { trainableParams: number }).trainableParams === row.measured.trainableParams) return { freeze, report };
  }
  return `no freeze list gives the run's ${row.measured.trainableParams} trainable parameters`;
}

function configFigures(report: Record<string, unknown>): Figures {
  const peak = report.peak as { totalBytes: number; breakdown: { contextBytes: number; allocatorSlackBytes: number } };
  const reserved = peak.totalBytes - peak.breakdown.contextBytes;
  return { allocated: reserved - peak.breakdown.allocatorSlackBytes, reserved, smi: peak.totalBytes };
}

function traceFigures(row: Row, freeze: string[]): Figures {
  const python = join(ROOT, '.venv/bin/python');
  const out = gpumemJson(['--gpu', 'H100-80GB', '--torch-version', '2.11', '--', python, join(ROOT, 'bench/gpu/accuracy_model.py'),
    '--train', row.config, '--batch', String(row.setup.batch), '--steps', '3', '--freeze', freeze.join(',')], 900_000);
  if (typeof out === 'string') return { unavailable: out };
  return { allocated: out.peakAllocatedBytes as number, reserved: out.peakReservedBytes as number, smi: out.nvidiaSmiBytes as number };
}

/** Every H100 row, traced and config-estimated (traced only when `trace`: it needs .venv and minutes). */
export function h100Results(trace: boolean): H100Result[] {
  return rows().map((row) => {
    const applied = appliedFreeze(row);
    if (typeof applied === 'string') {
      return { config: row.config, batch: row.setup.batch, freeze: row.setup.freeze, measured: row.measured, trace: { unavailable: applied }, config_: { unavailable: applied } };
    }
    return {
      config: row.config, batch: row.setup.batch, freeze: applied.freeze, measured: row.measured,
      trace: trace ? traceFigures(row, applied.freeze) : { unavailable: 'no .venv' },
      config_: configFigures(applied.report),
    };
  });
}

const GiB = 1024 ** 3;
const pct = (est: number, truth: number): number => ((est - truth) / truth) * 100;
const signed = (x: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(1)}`;

function errors(f: Figures, m: Run): string {
  if ('unavailable' in f) return `n/a (${f.unavailable.slice(0, 60)})`;
  return `${signed(pct(f.allocated, m.maxAllocatedBytes))} / ${signed(pct(f.reserved, m.maxReservedBytes))} / ${signed(pct(f.smi, m.nvmlPeakBytes))} %`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** One summary line per method and view: median and worst |error|, and under-estimates beyond −5 %. */
function summary(results: H100Result[], name: string, pick: (r: H100Result) => Figures): string[] {
  const views = [['allocated', 'maxAllocatedBytes'], ['reserved', 'maxReservedBytes'], ['nvidia-smi', 'nvmlPeakBytes']] as const;
  const got = results.filter((r) => !('unavailable' in pick(r)));
  if (got.length === 0) return [`  ${name}: no row`];
  return views.map(([view, key], i) => {
    const errs = got.map((r) => {
      const f = pick(r) as { allocated: number; reserved: number; smi: number };
      return pct([f.allocated, f.reserved, f.smi][i]!, r.measured[key]);
    });
    const worst = errs.reduce((a, b) => (Math.abs(b) > Math.abs(a) ? b : a), 0);
    return `  ${name.padEnd(6)} ${view.padEnd(10)} ${got.length} of ${results.length} rows  median |error| ${median(errs.map(Math.abs)).toFixed(1)} %  worst ${signed(worst)} %  under −5 %: ${errs.filter((e) => e < -5).length}`;
  });
}

/** The H100 section of `npm run bench -- estimate-accuracy`. */
export function h100Section(trace: boolean): string {
  const results = h100Results(trace);
  const head = ['config (batch)', 'measured allocated / reserved / nvidia-smi', 'trace error a / r / smi', 'config error a / r / smi'];
  const body = results.map((r) => [
    `${r.config} (${r.batch})${r.freeze.join() !== rows().find((x) => x.config === r.config)!.setup.freeze.join() ? ' †' : ''}`,
    `${(r.measured.maxAllocatedBytes / GiB).toFixed(2)} / ${(r.measured.maxReservedBytes / GiB).toFixed(2)} / ${(r.measured.nvmlPeakBytes / GiB).toFixed(2)} GiB`,
    errors(r.trace, r.measured), errors(r.config_, r.measured),
  ]);
  const widths = head.map((_, i) => Math.max(...[head, ...body].map((row) => row[i]!.length)));
  const table = [head, ...body].map((row) => row.map((x, i) => x.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
  return [
    'H100 80GB HBM3 rows (bench/results/2026-11-27-h100-80gb), traced here with --gpu H100-80GB --torch-version 2.11',
    table,
    '† the run froze fewer modules than its config names (transformers 5 names): estimated as the run really was',
    ...summary(results, 'trace', (r) => r.trace), ...summary(results, 'config', (r) => r.config_),
    'goal (trace, nvidia-smi): median ≤ 3 %, worst ≤ 8 %, none under −5 %; config: worst ≤ 15 %',
  ].join('\n');
}
