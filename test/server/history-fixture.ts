/**
 * A run history with one finished run (timeline on one GPU, one OOM, step timing of a training loop and a
 * short evaluation process, no PyTorch split) and one still running, for serve tests.
 */
import { join } from 'node:path';
import { explainOom, parseOomText } from '../../src/core/oom/index.js';
import type { StepSummary } from '../../src/core/companion/index.js';
import { beginRun, completeRun, openHistory, type HistoryReport } from '../../src/store/index.js';

export const RUN_UUID = 'GPU-00000000-0000-4000-8000-000000000000';
export const OOM_TEXT = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.12 GiB is free. <b>bold</b>';

const noBatchRange = { batchMin: null, batchMax: null };
/** The training loop's step timing: the busiest process, whose figures the run's row carries. */
export const TRAIN_STEPS: StepSummary = {
  steps: 200, meanStepMs: 45, meanDataWaitMs: 18, dataWaitShare: 0.4, samplesPerSec: 1422.2, tokensPerSec: null, batchSeen: 64, batchAsked: 64, ...noBatchRange,
};
/** A short evaluation process of the same attempt, without a DataLoader wait. */
export const EVAL_STEPS: StepSummary = {
  steps: 3, meanStepMs: 12.5, meanDataWaitMs: null, dataWaitShare: null, samplesPerSec: 5120, tokensPerSec: 81920, batchSeen: 64, batchAsked: null, ...noBatchRange,
};
export const TRAIN_PID = 4242;
export const EVAL_PID = 4243;

/** Writes the history into `dir` and returns its path and the finished run's id. */
export function writeHistory(dir: string): { path: string; runId: number } {
  const path = join(dir, 'history.db');
  const event = parseOomText(OOM_TEXT)[0];
  if (!event) throw new Error('the OOM text of the fixture no longer parses');
  const db = openHistory(path);
  const runId = beginRun(db, { argv: ['python', 'train.py', '--bs', '64'], cwd: '/w', startedAtMs: 1_790_000_000_000 });
  const timeline = Array.from({ length: 20 }, (_, k) => ({ tMs: k * 100, bytes: { [RUN_UUID]: (k + 1) * 512 * 1024 * 1024 } }));
  const report: HistoryReport = {
    argv: ['python', 'train.py', '--bs', '64'], cwd: '/w', startedAtMs: 1_790_000_000_000, durationMs: 2000, gpus: [{ index: 0, uuid: RUN_UUID }],
    env: [], retries: 0, exit: { code: 1, signal: null },
    attempts: [{
      attempt: 1, argv: ['python', 'train.py', '--bs', '64'], batch: null, durationMs: 2000, exit: { code: 1, signal: null },
      peaks: [{ index: 0, uuid: RUN_UUID, peakBytes: 20 * 512 * 1024 * 1024, atMs: 1900, chosen: true }],
      ooms: [{ line: 42, text: OOM_TEXT, event, causes: explainOom(event) }],
      cleanup: { leftovers: [] }, timeline,
      plugins: { companion: { gpus: [], splitTimeline: [], processes: [{ pid: EVAL_PID, steps: EVAL_STEPS }, { pid: TRAIN_PID, steps: TRAIN_STEPS }] } },
    }],
  };
  completeRun(db, runId, report);
  beginRun(db, { argv: ['python', 'eval.py'], cwd: '/w', startedAtMs: 1_790_000_100_000 });
  db.close();
  return { path, runId };
}
