/**
 * The worker thread of a snapshot analysis: reads the snapshot, runs the report and the allocator
 * simulations, and posts back the answer's JSON text. It runs off the server's event loop, so a long
 * what-if replay never delays /metrics, the page or other requests; the server stops it past its time budget.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isGpumemError } from '../../core/errors.js';
import { analyseSnapshot, snapshotAnalysisJson, toJsonText } from '../../orchestrate/snapshot-analysis.js';
import { readSnapshotBytes, readSnapshotFile } from '../../sources/snapshot-file.js';
import { pageSnapshotDocument } from '../documents/page-snapshot.js';
import { snapshotView } from '../snapshot-view.js';
import type { AnalysisJob, AnalysisResult } from './job.js';

function run(job: AnalysisJob): AnalysisResult {
  try {
    const snapshot = 'bytes' in job.input ? readSnapshotBytes(job.input.bytes, job.label) : readSnapshotFile(job.input.path);
    const analysis = analyseSnapshot(snapshot, job.options);
    const doc = job.view === 'page'
      ? pageSnapshotDocument(job.schemaVersion, job.source, snapshotView(analysis))
      : { ...snapshotAnalysisJson(analysis), source: job.source };
    return { kind: 'ok', text: toJsonText(doc) };
  } catch (error) {
    if (isGpumemError(error)) return { kind: 'refused', code: error.code, message: error.message };
    // Only the name and message travel: a stack would describe our code, not the file.
    const e = error as { name?: unknown; message?: unknown } | null;
    return { kind: 'unreadable', message: `${String(e?.name ?? 'Error')}: ${String(e?.message ?? error)}` };
  }
}

parentPort?.postMessage(run(workerData as AnalysisJob));
