/**
 * The one reader of stored run reports: wrong shapes at every level, 100,000-deep JSON, unknown fields from
 * newer writers, and a report as `gpumem run` stores it, read back field for field. The reader never throws;
 * what it could not read is listed in `damage`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderPytorch } from '../../../src/cli/render/run-pytorch.js';
import { parseStoredRunReport, STORED_REPORT_VERSION } from '../../../src/core/run/index.js';
import { compareView, hasSplitTimeline, splitView, stepsView } from '../../../src/server/run-view.js';
import type { RunRow } from '../../../src/store/index.js';

const attempt = {
  attempt: 1, argv: ['python', 'train.py'], batch: { batch: 8, accum: 2 }, durationMs: 1200, exit: { code: 1, signal: null },
  peaks: [{ index: 0, uuid: 'GPU-a', peakBytes: 1024, atMs: 5, chosen: true }],
  ooms: [{ line: 3, text: 'torch.OutOfMemoryError: CUDA out of memory.', event: {}, causes: [] }],
  cleanup: { leftovers: [{ pid: 7, gpuBytes: 512, outcome: 'terminated', detail: 'SIGTERM' }], memoryReleased: true, waitedMs: 3, heldByNothing: [], toleranceBytes: 0 },
  timeline: [{ tMs: 0, bytes: { 'GPU-a': 1024 } }],
  plugins: { companion: { gpus: [{ gpuUuid: 'GPU-a', gpuIndex: 0, atMs: 4, treeBytes: 2048, allocatedBytes: 1024, reservedBytes: 1536, peakAllocatedBytes: 1100, peakReservedBytes: 1600, numAllocRetries: 0, numOoms: 1 }],
    unprintedOoms: [], snapshots: ['/runs/1/oom-0.pickle'], processes: [{ pid: 9, ooms: [], oomsNotKept: 0, companionErrors: {}, steps: null }] } },
};
const intact = { argv: ['python', 'train.py'], cwd: '/w', startedAtMs: 1, durationMs: 1200, gpus: null, env: [{ name: 'PYTORCH_CUDA_ALLOC_CONF', value: 'expandable_segments:True', previous: null, action: 'set', reason: 'x' }], retries: 0, exit: { code: 1, signal: null }, attempts: [attempt] };

describe('parseStoredRunReport', () => {
  it('reads a report as the history stores it, with no damage, and keeps the document as written', () => {
    const r = parseStoredRunReport(JSON.stringify({ ...intact, pipelineCleanup: { fromNewerWriter: true } }));
    expect(r.damage).toEqual([]);
    expect(r.schemaVersion).toBe(STORED_REPORT_VERSION);
    expect(r.env).toEqual([{ name: 'PYTORCH_CUDA_ALLOC_CONF', value: 'expandable_segments:True', action: 'set' }]);
    const a = r.attempts[0]!;
    expect(a.exit).toEqual({ code: 1, signal: null });
    expect(a.peaks).toEqual([{ index: 0, uuid: 'GPU-a', peakBytes: 1024, atMs: 5, chosen: true }]);
    expect(a.ooms).toEqual([{ line: 3, text: 'torch.OutOfMemoryError: CUDA out of memory.', event: {}, causes: [] }]);
    expect(a.plugins.companion?.gpus[0]?.peakAllocatedBytes).toBe(1100);
    expect(a.plugins.companion?.snapshots).toEqual(['/runs/1/oom-0.pickle']);
    expect((r.document as { pipelineCleanup: unknown }).pipelineCleanup).toEqual({ fromNewerWriter: true });
  });

  it.each([
    ['not JSON', '{', 'the report is not JSON'],
    ['a list', '[1,2]', 'the report is a list, not an object'],
    ['a number', '5', 'the report is 5, not an object'],
    ['null', 'null', 'the report is null, not an object'],
  ])('a report that is %s: no attempts, one damage line', (_what, json, damage) => {
    const r = parseStoredRunReport(json);
    expect(r.attempts).toEqual([]);
    expect(r.damage).toEqual([damage]);
    expect(r.document).toBeNull();
  });

  it('names each field of the wrong type and keeps the rest', () => {
    const r = parseStoredRunReport(JSON.stringify({ ...intact, env: 'x', attempts: [{ ...attempt, exit: 'crashed', peaks: [{ index: 0, peakBytes: '1 GiB' }, { index: 1, peakBytes: 5 }] }, 7] }));
    expect(r.damage).toEqual([
      'report.attempts[0].exit is a string, not an object',
      'report.attempts[0].peaks[0].peakBytes is a string, not a number',
      'report.attempts[1] is 7, not an object',
      'report.env is a string, not a list',
    ]);
    expect(r.attempts).toHaveLength(1);
    expect(r.attempts[0]!.exit).toBeNull();
    expect(r.attempts[0]!.peaks).toEqual([{ index: 1, uuid: null, peakBytes: 5, atMs: null, chosen: true }]);
    expect(r.attempts[0]!.ooms).toHaveLength(1);
  });

  it('100,000-deep JSON is a damaged report, not a RangeError, however it is read', () => {
    const deep = `{"attempts":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const r = parseStoredRunReport(deep);
    expect(r.damage).toEqual(['the report nests deeper than 64 levels']);
    expect(r.document).toBeNull();
  });

  it('a report from a newer gpumem is read as far as its fields are known', () => {
    const r = parseStoredRunReport(JSON.stringify({ ...intact, schemaVersion: STORED_REPORT_VERSION + 1 }));
    expect(r.attempts).toHaveLength(1);
    expect(r.damage).toEqual([`the report was written by a newer gpumem (version ${STORED_REPORT_VERSION + 1}); fields this version does not know are left out`]);
  });

  it('any JSON in any field of an attempt: never throws', () => {
    const keys = ['attempt', 'batch', 'durationMs', 'exit', 'peaks', 'ooms', 'cleanup', 'timeline', 'plugins'];
    const companionKeys = ['gpus', 'unprintedOoms', 'snapshots', 'snapshotAnswers', 'splitTimeline', 'processes'];
    fc.assert(fc.property(fc.constantFrom(...keys, ...companionKeys), fc.jsonValue({ maxDepth: 4 }), (key, value) => {
      const a = JSON.parse(JSON.stringify(attempt)) as Record<string, Record<string, Record<string, unknown>>>;
      if (companionKeys.includes(key)) a.plugins!.companion![key] = value;
      else (a as Record<string, unknown>)[key] = value;
      const r = parseStoredRunReport(JSON.stringify({ ...intact, attempts: [a] }));
      expect(r.attempts).toHaveLength(1);
      // Every view of a stored run reads the parsed report without throwing.
      const run = { id: 1, pipelineId: null, stage: null, argv: ['python'], cwd: '/', gpus: null, startedAtMs: 0, durationMs: 1, status: 'ok', exitCode: 0, exitSignal: null, retries: 0, peakBytes: null, meanStepMs: null, dataWaitShare: null, samplesPerSec: null } satisfies RunRow;
      compareView({ run, report: r }, { run, report: parseStoredRunReport(JSON.stringify(intact)) });
      splitView(r);
      stepsView(r);
      hasSplitTimeline(r);
      renderPytorch(r.attempts, (_c, t) => t);
    }), { numRuns: 300 });
  });
});
