/**
 * Breaks deep inside real documents: for each kind whose schema describes its nested objects, values put at a
 * path (a wrong type, a string outside its enumeration, a required field removed) that its schema must reject
 * with a problem at that path. emitted.test.ts applies them to every document the CLI and the server emit, so
 * the deep schemas are proven on real output, not on hand-made copies.
 */

/** A key or an index; REMOVE as the value drops the field instead of replacing it. */
type Step = string | number;
export const REMOVE = Symbol('remove');

export interface Break {
  path: Step[];
  value: unknown;
}

const b = (path: string, value: unknown): Break => ({ path: path.split('.').filter((s) => s !== '').map((s) => (/^\d+$/.test(s) ? Number(s) : s)), value });

/** The device and process-row breaks, under a prefix (the status document and the diagnosis share them). */
const deviceBreaks = (at: string): Break[] => [
  b(`${at}.0.memory.usedBytes`, '1024'),
  b(`${at}.0.memory.totalBytes`, 1.5),
  b(`${at}.0.utilization.gpuPct`, '50%'),
  b(`${at}.0.status`, 'fine'),
  b(`${at}.0.migMode`, 'on'),
  b(`${at}.0.unavailable`, { temperatureC: 3 }),
  b(`${at}.0.migInstances`, [{ gpuInstanceId: 1 }]),
  b(`${at}.0.name`, REMOVE),
];

/** The breaks of one OOM event, under a prefix (the whole explain document and a --follow line share them). */
const oomEventBreaks = (at: string): Break[] => [
  b(`${at}.family`, 'pytorch-cuda-2'),
  b(`${at}.framework`, 'torch'),
  b(`${at}.requestedBytes`, '1.70 GiB'),
  b(`${at}.lines`, [10.5]),
  b(`${at}.era`, { version: 2.4 }),
  b(`${at}.otherProcesses.0.pid`, '48213'),
  b(`${at}.userFrame.line`, '97'),
  b(`${at}.unavailable`, { totalBytes: false }),
  b(`${at}.causes.0.score`, 'high'),
  b(`${at}.causes.0.evidence`, { freeBytes: { value: 1 } }),
  b(`${at}.causes.0.detail`, REMOVE),
];

/** The breaks of one run report, under a prefix (run --json, a pipeline's stage, the history's stored report). */
const runReportBreaks = (at: string): Break[] => [
  b(`${at}.env.0.action`, 'changed'),
  b(`${at}.gpus.0.uuid`, 0),
  b(`${at}.preflight.0.otherProcesses`, 'none'),
  b(`${at}.attempts.0.exit.code`, '0'),
  b(`${at}.attempts.0.peaks.0.peakBytes`, '1 GiB'),
  b(`${at}.attempts.0.cleanup.memoryReleased`, 'yes'),
  b(`${at}.attempts.0.cleanup.leftovers`, [{ pid: 1, outcome: 'vanished' }]),
  b(`${at}.attempts.0.timeline.0.bytes`, { 'GPU-0': '1 GiB' }),
  b(`${at}.attempts.0.ooms`, [{ line: 'one', text: 'x', event: {}, causes: [] }]),
  b(`${at}.attempts.0.plugins`, { companion: { schemaVersion: 'one' } }),
  b(`${at}.attempts.0.findings`, [{ id: 'slow', gpuIndex: null, title: 't', fix: 'f', details: {} }]),
  b(`${at}.peaks.0.chosen`, 'yes'),
  b(`${at}.exit.signal`, 9),
];

export const NESTED_BREAKS: Record<string, Break[]> = {
  'gpumem.status': [
    ...deviceBreaks('devices'),
    b('devices.0.clocks.smMhz', 'fast'),
    b('source.kind', 'guess'),
    b('processes.0.usedBytes', '1 GiB'),
    b('processes.0.kind', 'cuda'),
    b('processes.0.host.visible', 'yes'),
    b('processes.0.host.state', 'Q'),
    b('processes.0.host.cmdline', 'python train.py'),
    b('processes.0.host.cudaEnv', { CUDA_VISIBLE_DEVICES: 0 }),
    b('processes.0.host.job', { slurmJobId: 7 }),
  ],
  'gpumem.diagnose': [
    ...deviceBreaks('devices'),
    b('window.spanMs', 'long'),
    b('source.kind', 'guess'),
    b('findings.0.severity', 'fatal'),
    b('findings.0.evidence.pids', ['1']),
    b('findings.0.evidence.details', { reason: { nested: true } }),
    b('findings.0.evidence.summary', REMOVE),
    b('accounting.0.visibleBytes', null),
    b('accounting.0.pytorch', [{ pid: 1 }]),
    b('trees.0.bytesByGpu', { 0: '1 GiB' }),
    b('trees.0.launcher', 'no'),
    b('users.0.totalBytes', '2'),
    b('processes.0.role', 'boss'),
    b('processes.0.util', { meanPct: 1 }),
    b('processes.0.state', 'Q'),
  ],
  'gpumem.processes': [b('processes.0.kind', 'cuda'), b('processes.0.host.cmdline', 'python train.py')],
  'gpumem.explain': oomEventBreaks('events.0'),
  'gpumem.estimate': [
    b('model.paramsByModule', { 'model.layers': '2.9M' }),
    b('setup.precision', 'fp8'),
    b('setup.freeze', 'backbone'),
    b('environment.fragmentation', '5%'),
    b('activationMethod', 'guessed'),
    b('peak.phase', 'step'),
    b('peak.breakdown.weightsBytes', 1.5),
    b('phases.0.breakdown.activationsBytes', REMOVE),
    b('fit.fits', 'yes'),
    b('accumulation.microBatch', '8'),
    b('stages.0.fits', 'maybe'),
    b('stages.1.growth.0.component', 'everything'),
    b('unfreeze.0.frozen', [1]),
    b('peakRangeBytes.highBytes', null),
  ],
  'gpumem.run': [
    ...runReportBreaks(''),
    // The companion's part and a joined OOM (the run under the fake torch).
    b('attempts.0.ooms.0.allocator.source', 'guess'),
    b('attempts.0.ooms.0.event.family', 'pytorch'),
    b('attempts.0.ooms.0.causes.0.score', '92'),
    b('attempts.0.plugins.companion.gpus.0.treeBytes', '1 GiB'),
    b('attempts.0.plugins.companion.processes.0.devices.0.allocatedBytes', '30 MiB'),
    b('attempts.0.plugins.companion.processes.0.ooms.0.source', 'guess'),
    b('attempts.0.plugins.companion.processes.0.companionErrors', { observer: 1 }),
    b('attempts.0.plugins.companion.snapshots', [null]),
    b('attempts.0.plugins.companion.snapshotAnswers.0.devices.0.whatIf.oomAvoided', 'yes'),
    b('attempts.0.plugins.companion.unprintedOoms', [{ pid: 1 }]),
    // Step timing and the rank (the training loop run as rank 0).
    b('attempts.0.plugins.companion.processes.0.steps.meanStepMs', 'fast'),
    b('attempts.0.plugins.companion.processes.0.steps.loader', { numWorkers: '0' }),
    b('attempts.0.plugins.companion.ranks.0.rankSource', 'slurm'),
    b('attempts.0.plugins.companion.ranks.0.gpus', [{ gpuIndex: 0 }]),
    b('attempts.0.findings.0.id', 'slow-loader'),
    b('attempts.0.findings.0.details', { share: '40%' }),
  ],
  // The pipeline's stages run `true`: no GPU memory, so no peaks to break.
  'gpumem.pipeline': runReportBreaks('stages.0.run').filter((brk) => !brk.path.includes('peaks')),
  'gpumem.run-detail': [...runReportBreaks('report'), b('run.gpus.0.index', '0')],
  'gpumem.runs': [b('runs.0.gpus.0.index', '0'), b('pipelines.0.stages.0.runId', '1')],
  'gpumem.snapshot': [
    b('generation', 'pickle'),
    b('devices.0.summary.reservedBytes', '1 GiB'),
    b('devices.0.summary.segmentsByType', { large: { count: '3' } }),
    b('devices.0.summary.pools.0.stream', null),
    b('devices.0.sites.0.bytes', 1.5),
    b('devices.0.trace.timeline.0.allocatedBytes', '0'),
    b('devices.0.trace.actions', { alloc: 'many' }),
    b('devices.0.simulation.actual.match.addressMatches', 'all'),
    b('devices.0.simulation.whatIf.0.oomAvoided', 'yes'),
  ],
  'gpumem.snapshot.diff': [b('sites.0.deltaBytes', '+1 MiB'), b('sites.0.site', REMOVE)],
  'gpumem.fit': [
    b('line.perSampleBytes', 'a lot'),
    b('runs.0.reason', 'guess'),
    b('runs.0.perGpuPeakBytes', ['1 GiB']),
    b('runs.0.fits', REMOVE),
    b('gpus.0.freeBytesAtStart', null),
  ],
  'gpumem.explain-event': oomEventBreaks('event'),
};

/** A deep copy of `doc` with the break applied, or null when `doc` has nothing at its path. */
export function broken(doc: unknown, brk: Break): unknown {
  const copy = structuredClone(doc) as Record<Step, unknown>;
  let at: Record<Step, unknown> = copy;
  for (const step of brk.path.slice(0, -1)) {
    const next = at[step];
    if (next === null || typeof next !== 'object') return null;
    at = next as Record<Step, unknown>;
  }
  const last = brk.path[brk.path.length - 1] as Step;
  if (!(last in at)) return null;
  if (brk.value === REMOVE) delete at[last];
  else at[last] = brk.value;
  return copy;
}

/** Where the schema must report the break: the path itself, or for a removed field the object holding it. */
export function expectedAt(brk: Break): string {
  const path = brk.value === REMOVE ? brk.path.slice(0, -1) : brk.path;
  return `/${path.join('/')}`;
}
