/**
 * Runs a diagnosis: builds the process views, trees and per-GPU accounting from a window of samples, then
 * every rule over them, and returns one report ordered by severity.
 */
import { GpumemError } from '../errors.js';
import type { Device, Sample } from '../types.js';
import { accountDevice } from './accounting.js';
import { buildProcessViews } from './process-view.js';
import { RULES } from './rules/index.js';
import { buildTrees, treeOf, userTotals } from './trees.js';
import type { DeviceAccounting, DiagnoseInput, Finding, ProcessTree, ProcessView, Rule, RuleContext, Severity, UserTotal } from './types.js';

/** Version of the JSON shape (docs/diagnose.md). Bump on any incompatible change. */
export const DIAGNOSE_SCHEMA_VERSION = 1;

export interface DiagnoseReport {
  schemaVersion: typeof DIAGNOSE_SCHEMA_VERSION;
  /** Time of the latest sample, ms since the epoch. */
  timeMs: number;
  window: { samples: number; firstMs: number; lastMs: number; spanMs: number };
  source: Sample['source'];
  /** The GPUs as the latest sample saw them. */
  devices: Device[];
  accounting: DeviceAccounting[];
  processes: ProcessView[];
  trees: ProcessTree[];
  users: UserTotal[];
  findings: Finding[];
}

const ORDER: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };

/** Builds the shared context the rules read. Exported for rule tests. */
export function buildContext(input: DiagnoseInput): RuleContext {
  const { samples } = input;
  const latest = samples[samples.length - 1];
  if (!latest) {
    throw new GpumemError('INPUT_MALFORMED', 'nothing to diagnose: the window has no samples', {
      hint: 'give a longer --window, or a recording with at least one sample',
    });
  }
  const first = samples[0] as Sample;
  const views = buildProcessViews(samples, input.ancestors, input.companion);
  // The facts of a pid that exited during the window are the ones /proc last showed for it (looked up only
  // for the rows /proc cannot see now: most windows have none, and a window of 512 rows × 10 samples is long).
  const lastSeen = new Map<number, NonNullable<Sample['processes'][number]['host']>>();
  const unseen = new Set(views.filter((v) => !v.visible).map((v) => v.pid));
  for (let i = samples.length - 1; i >= 0 && unseen.size > lastSeen.size; i--) {
    for (const p of (samples[i] as Sample).processes) {
      if (p.host?.visible === true && unseen.has(p.pid) && !lastSeen.has(p.pid)) lastSeen.set(p.pid, p.host);
    }
  }
  const shown = views.map((v): ProcessView => {
    if (v.visible) return v;
    const seen = lastSeen.get(v.pid);
    if (seen) return { ...v, gone: true, user: seen.user, uid: seen.uid, ppid: seen.ppid, command: seen.cmdline?.join(' ') ?? v.command };
    return input.pidNamespace === 'host' ? { ...v, gone: true } : v;
  });
  const trees = buildTrees(shown, input.ancestors);
  const ranked = shown.map((v): ProcessView => {
    const tree = treeOf(trees, v.pid);
    // A direct child of a launcher (a custom one too: a Python parent of several GPU processes) is one of its ranks.
    if (v.role === 'main' && tree?.launcher && v.ppid === tree.rootPid) return { ...v, role: 'rank' };
    return v;
  });
  return {
    samples,
    latest,
    devices: latest.devices,
    processes: ranked,
    trees,
    accounting: latest.devices.map((d) => accountDevice(d, ranked, input.companion ?? {})),
    viewer: input.viewer,
    pidNamespace: input.pidNamespace,
    ancestors: input.ancestors,
    windowMs: latest.timeMs - first.timeMs,
    companion: input.companion ?? {},
  };
}

/** Diagnoses a window of samples with the given rules (all of them by default). */
export function diagnose(input: DiagnoseInput, rules: readonly Rule[] = RULES): DiagnoseReport {
  const ctx = buildContext(input);
  const findings = rules
    .flatMap((rule, order) => rule.check(ctx).map((f) => ({ f, order })))
    .sort((a, b) => ORDER[a.f.severity] - ORDER[b.f.severity] || a.order - b.order)
    .map(({ f }) => f);
  const first = ctx.samples[0] as Sample;
  return {
    schemaVersion: DIAGNOSE_SCHEMA_VERSION,
    timeMs: ctx.latest.timeMs,
    window: { samples: ctx.samples.length, firstMs: first.timeMs, lastMs: ctx.latest.timeMs, spanMs: ctx.windowMs },
    source: ctx.latest.source,
    devices: [...ctx.devices],
    accounting: [...ctx.accounting],
    processes: [...ctx.processes],
    trees: [...ctx.trees],
    users: userTotals(ctx.processes),
    findings,
  };
}
