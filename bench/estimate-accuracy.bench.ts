/**
 * Accuracy of `gpumem estimate` against published peak training memory (bench/truth/measurements.json, rules in
 * bench/truth/README.md): for every case, config mode, trace mode (real torch on fake tensors, when the case's
 * program can be built here), accelerate's "Training using Adam" rule and DeepSpeed's model-states formula, each
 * compared with the number the case measured, in the same view. Goal: median |error| ≤ 3 %, worst ≤ 8 %, no
 * under-estimate beyond the 8 % margin. The held-out third (`heldOut`, chosen by a hash of the id before any
 * comparison) is summarised apart. Trace mode needs .venv/ (npx vitest sets it up) and dist/ (npm run bench builds it).
 * A second table splits each gpumem estimate by category at its peak, to show where bytes are missing.
 * ESTIMATE_ACCURACY_TUNING_ONLY=1 leaves the held-out cases out entirely (for work on the model).
 * Last, every row measured on an H100 (truth/h100-rows.ts): trace and config mode, three views each.
 */
import { existsSync, readFileSync } from 'node:fs';
import { formatBytes } from '../src/core/units.js';
import { accelerateEstimate, configEstimate, deepspeedEstimate, traceEstimate } from './truth/methods.js';
import type { Estimate, TruthCase } from './truth/methods.js';
import { h100Section } from './truth/h100-rows.js';

const METHODS = ['gpumem config', 'gpumem trace', 'accelerate', 'deepspeed'] as const;
const MARGIN_PCT = 8;

interface Row { c: TruthCase; estimates: Estimate[] }

const errorPct = (e: Estimate, truth: number): number | null => ('bytes' in e ? ((e.bytes - truth) / truth) * 100 : null);

function cell(e: Estimate, truth: number): string {
  if (!('bytes' in e)) return `n/a (${e.unavailable})`;
  const err = errorPct(e, truth)!;
  return `${formatBytes(e.bytes)} ${err >= 0 ? '+' : ''}${err.toFixed(1)} %`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function summary(rows: Row[], label: string): string[] {
  const lines = [`${label} (${rows.length} cases)`];
  METHODS.forEach((name, i) => {
    const errs = rows.map((r) => errorPct(r.estimates[i]!, r.c.valueBytes)).filter((x): x is number => x !== null);
    if (errs.length === 0) {
      lines.push(`  ${name.padEnd(14)} no case`);
      return;
    }
    const abs = errs.map(Math.abs);
    const under = errs.filter((x) => x < -MARGIN_PCT).length;
    lines.push(`  ${name.padEnd(14)} n=${String(errs.length).padStart(2)}  median |error| ${median(abs).toFixed(1)} %  worst ${Math.max(...abs).toFixed(1)} %  under-estimates beyond −${MARGIN_PCT} %: ${under}`);
  });
  return lines;
}

const CATEGORIES = ['weights', 'gradients', 'optimizer-state', 'activations', 'temporaries', 'workspace', 'slack', 'context'] as const;

/** One line per gpumem estimate that has a breakdown: bytes per category at its peak, and the gap to the truth. */
function breakdownTable(rows: Row[]): string {
  const header = ['case', 'method', ...CATEGORIES, 'truth − estimate'];
  const body: string[][] = [];
  for (const r of rows) {
    r.estimates.slice(0, 2).forEach((e, i) => {
      if (!('bytes' in e) || !e.breakdown) return;
      const b = e.breakdown;
      body.push([r.c.id, METHODS[i]!, ...CATEGORIES.map((k) => formatBytes(b[k] ?? 0)), `${r.c.valueBytes >= e.bytes ? '' : '−'}${formatBytes(Math.abs(r.c.valueBytes - e.bytes))}`]);
    });
  }
  return table([header, ...body]);
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((x, i) => x.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

export async function run(): Promise<void> {
  const root = new URL('..', import.meta.url).pathname;
  const all = (JSON.parse(readFileSync(new URL('truth/measurements.json', import.meta.url), 'utf8')) as { cases: TruthCase[] }).cases;
  const tuningOnly = process.env.ESTIMATE_ACCURACY_TUNING_ONLY === '1';
  const cases = tuningOnly ? all.filter((c) => !c.heldOut) : all;
  const venv = existsSync(`${root}.venv/bin/python`);
  const rows: Row[] = [];
  for (const c of cases) {
    const config = configEstimate(c);
    const params = config.totalParams ?? c.model.params;
    const trace = venv ? traceEstimate(c) : { unavailable: 'no .venv' };
    const peers: Estimate[] = params ? [accelerateEstimate(c, params), deepspeedEstimate(c, params)] : [{ unavailable: 'no parameter count' }, { unavailable: 'no parameter count' }];
    rows.push({ c, estimates: [config, trace, ...peers] });
  }
  const header = ['case (* held out)', 'metric', 'truth', ...METHODS];
  const body = rows.map((r) => [`${r.c.heldOut ? '*' : ' '}${r.c.id}`, r.c.metric, formatBytes(r.c.valueBytes), ...r.estimates.map((e) => cell(e, r.c.valueBytes))]);
  process.stdout.write(`${table([header, ...body])}\n\n`);
  process.stdout.write(`at each estimate's peak (slack: reserved beyond requested; the truth's view may exclude context and slack)\n${breakdownTable(rows)}\n\n`);
  const heldOut = tuningOnly ? [] : summary(rows.filter((r) => r.c.heldOut), 'held-out set');
  const lines = [...summary(rows.filter((r) => !r.c.heldOut), 'tuning set'), ...heldOut];
  process.stdout.write(`${lines.join('\n')}\nerror = (estimate − truth) / truth; goal: median ≤ 3 %, worst ≤ 8 %, none under −${MARGIN_PCT} %\n\n`);
  process.stdout.write(`${h100Section(venv)}\n`);
}
