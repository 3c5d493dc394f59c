/** Human output of `gpumem estimate`: model line, phase totals, breakdown at the peak, fit, stages. */
import { formatBytes } from '../../core/units.js';
import { printable } from '../../core/text.js';
import type { Breakdown } from '../../core/estimate/estimate.js';
import type { EstimateReport } from '../../core/estimate/report.js';
import { painter, table } from './style.js';

const LABELS: Record<keyof Breakdown, string> = {
  weightsBytes: 'weights',
  gradientsBytes: 'gradients',
  optimizerStatesBytes: 'optimizer states',
  emaBytes: 'EMA copy',
  activationsBytes: 'activations',
  transientsBytes: 'transients',
  contextBytes: 'CUDA context',
  workspaceBytes: 'cuBLAS workspace',
  allocatorSlackBytes: 'allocator slack',
};

/** Parameter counts with thousands separators: exact counts are the point of reading headers. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

function topModules(byModule: Record<string, number> | null): string {
  if (!byModule) return '';
  const entries = Object.entries(byModule).sort((a, b) => b[1] - a[1]);
  const shown = entries.slice(0, 6).map(([m, n]) => `${printable(m)} ${formatCount(n)}`);
  return `${shown.join(', ')}${entries.length > 6 ? `, … (${entries.length - 6} more)` : ''}`;
}

/** Renders the report as text; colour only when `color`. */
export function renderEstimate(r: EstimateReport, color: boolean): string {
  const paint = painter(color);
  const out: string[] = [];
  const m = r.model;
  out.push(`${paint('bold', 'model')}  ${printable(m.label)} (${m.source}): ${formatCount(m.totalParams - m.bufferParams)} parameters${m.bufferParams ? ` + ${formatCount(m.bufferParams)} buffer values` : ''}, ${formatCount(m.trainableParams)} trainable${m.loraParams ? ` (LoRA r=${r.setup.loraRank})` : ''}`);
  if (m.paramsByDtype) out.push(`       by dtype: ${Object.entries(m.paramsByDtype).map(([d, n]) => `${printable(d)} ${formatCount(n)}`).join(', ')}`);
  if (m.paramsByModule) out.push(`       by module: ${topModules(m.paramsByModule)}`);
  const s = r.setup;
  const opt = s.optimizer.startsWith('adam') && s.optimizer !== 'adam8bit' ? `${s.optimizer} (${s.optimizerImpl})` : s.optimizer;
  const shard = s.sharding === 'none' ? '' : ` · ${s.sharding} over ${s.gpus} GPUs`;
  out.push(`${paint('bold', 'setup')}  ${s.precision} · ${opt} · batch ${s.batch}${s.seq ? ` × seq ${s.seq}` : ''} · checkpointing ${s.checkpointing}${s.ema ? ' · EMA' : ''}${shard}`);
  // Unknown activations are not zero: every total below is then a floor, and says so.
  const unknown = r.activationMethod === 'none';
  const floor = (bytes: number): string => `${unknown ? '≥ ' : ''}${formatBytes(bytes)}`;
  out.push(unknown ? `       activations unknown (not in the totals below, which are floors)` : `       activations ${formatBytes(r.activationBytesPerSample)} per sample (${r.activationMethod})`);
  out.push('');
  const rows = r.phases.map((p) => [p.phase, floor(p.totalBytes), p === r.peak || p.phase === r.peak.phase ? paint('yellow', '← peak') : '']);
  out.push(...table([['phase', 'total', ''], ...rows], ['left', 'right']));
  out.push('');
  out.push(`breakdown at the peak (${r.peak.phase}):`);
  const b = r.peak.breakdown;
  const brows = (Object.keys(LABELS) as Array<keyof Breakdown>).filter((k) => b[k] > 0 || k === 'activationsBytes').map((k) => [`  ${LABELS[k]}`, k === 'activationsBytes' && unknown ? 'unknown' : formatBytes(b[k])]);
  out.push(...table([...brows, ['  total', floor(r.peak.totalBytes)]], ['left', 'right']));
  if (r.fit) {
    const f = r.fit;
    out.push('');
    // Without activations the peak is the model states alone: only "does not fit" is known.
    const verdict = f.fits ? (unknown ? paint('yellow', 'fits before activations, which are unknown') : paint('green', 'fits')) : paint('red', 'does not fit');
    out.push(`${paint('bold', f.gpu)}: ${formatBytes(f.capacityBytes)} usable, budget ${formatBytes(f.budgetBytes)} (${Math.round(f.margin * 100)} % margin) — batch ${s.batch} ${verdict}`);
    if (f.unbounded) out.push('  max batch: not predicted (activations unknown; give --activation-bytes-per-sample)');
    else if (f.maxBatch === 0) out.push(paint('red', `  even batch 1 needs ${formatBytes(f.peakAtMaxBytes)} (at ${f.peakAtMaxPhase})`));
    else out.push(`  max batch ${f.maxBatch} (peak ${formatBytes(f.peakAtMaxBytes)} at ${f.peakAtMaxPhase})`);
  }
  if (r.accumulation) {
    const a = r.accumulation;
    out.push(`  effective batch ${a.effectiveBatch}: ${a.steps} accumulation step${a.steps === 1 ? '' : 's'} × micro-batch ${a.microBatch}${a.realisedBatch !== a.effectiveBatch ? ` (= ${a.realisedBatch}; no exact split fits)` : ''}`);
  }
  if (r.stages) {
    out.push('', paint('bold', 'stages'));
    const srows = r.stages.map((st) => {
      const what = st.freeze.length ? `freeze ${st.freeze.join('+')}` : 'full';
      const verdict = st.fits === null ? (r.fit && !st.activationsKnown ? paint('yellow', 'activations unknown') : '') : st.fits ? paint('green', 'fits') : paint('red', 'BREAKS');
      const max = st.maxBatch === null ? '' : `max batch ${st.maxBatch}`;
      return [`  ${printable(st.name)}`, `batch ${st.batch}`, what, `ckpt ${st.checkpointing}`, `${st.activationsKnown ? '' : '≥ '}${formatBytes(st.peak.totalBytes)}`, st.peak.phase, verdict, max];
    });
    out.push(...table(srows, ['left', 'left', 'left', 'left', 'right']));
    for (const st of r.stages) {
      if (st.fits !== false) continue;
      const why = st.growth.slice(0, 4).map((g) => `${LABELS[g.component as keyof Breakdown] ?? g.component} +${formatBytes(g.deltaBytes)}`).join(', ');
      out.push(`  ${printable(st.name)} breaks${why ? ` because ${why} against the stage before` : ''}`);
    }
  }
  if (r.unfreeze) {
    out.push('', paint('bold', 'progressive unfreezing'));
    const urows = r.unfreeze.map((u, i) => [`  step ${i}`, u.frozen.length ? `frozen ${u.frozen.join('+')}` : 'all trainable', formatBytes(u.peakBytes), u.peakPhase, u.maxBatch === null ? '' : `max batch ${u.maxBatch}`]);
    out.push(...table(urows, ['left', 'left', 'right']));
  }
  const range = r.peakRangeBytes;
  if (range.lowBytes !== range.highBytes) out.push(`peak range ${floor(range.lowBytes)} – ${formatBytes(range.highBytes)} (the CUDA context's reported sizes${unknown ? '; activations not included' : ''})`);
  for (const a of r.assumptions) out.push(paint('gray', `assumes: ${a}`));
  for (const n of r.notes) out.push(paint('gray', `note: ${n}`));
  return `${out.join('\n')}\n`;
}
