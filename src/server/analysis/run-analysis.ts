/**
 * Runs one snapshot analysis in a worker thread (node:worker_threads) under a time budget and a heap bound.
 * A 23 MB trace replayed under 8 what-if settings takes seconds of CPU: on the event loop it would stall
 * every other request for that long. A worker past its budget or out of heap is stopped and only its own
 * request fails.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { AnalysisJob, AnalysisResult } from './job.js';

export interface AnalysisLimits {
  /** Time budget of one analysis. */
  timeMs: number;
  /** Heap of one analysis's worker (V8's old generation), in MiB. */
  heapMb: number;
}

export const DEFAULT_ANALYSIS_LIMITS: AnalysisLimits = { timeMs: 60_000, heapMb: 1024 };

/**
 * The worker's code. Built, it is worker.js beside this file. Run from the TypeScript sources (the tests),
 * there is only worker.ts, so the worker first registers tsx, the dev dependency that runs TypeScript.
 */
function workerSource(): { file: URL } | { eval: string } {
  const built = new URL('./worker.js', import.meta.url);
  if (existsSync(fileURLToPath(built))) return { file: built };
  const source = new URL('./worker.ts', import.meta.url).href;
  return { eval: `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(source)}); });` };
}

/**
 * Runs `job` in a fresh worker; the upload's bytes move to the worker (the caller must not touch them after).
 * `signal` stops it (the server is stopping).
 */
export function analyseInWorker(job: AnalysisJob, limits: AnalysisLimits = DEFAULT_ANALYSIS_LIMITS, signal?: AbortSignal): Promise<AnalysisResult> {
  const source = workerSource();
  const transferList = 'bytes' in job.input ? [job.input.bytes.buffer as ArrayBuffer] : [];
  const options = { workerData: job, transferList, resourceLimits: { maxOldGenerationSizeMb: limits.heapMb } };
  const worker = 'file' in source ? new Worker(source.file, options) : new Worker(source.eval, { ...options, eval: true });
  // Neither the worker nor its budget keeps gpumem alive: the listening server does, and once Ctrl-C closed it
  // an analysis still running has nobody left to answer.
  worker.unref();
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (result: AnalysisResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      resolve(result);
      void worker.terminate();
    };
    const stop = (): void => settle({ kind: 'stopped' });
    if (signal?.aborted) return stop();
    signal?.addEventListener('abort', stop);
    timer = setTimeout(() => settle({ kind: 'timeout', limitMs: limits.timeMs }), limits.timeMs).unref();
    worker.once('message', (result: AnalysisResult) => settle(result));
    worker.once('error', (error: NodeJS.ErrnoException) => {
      settle(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? { kind: 'memory', limitMb: limits.heapMb } : { kind: 'crashed', error });
    });
    worker.once('exit', (code) => settle({ kind: 'crashed', error: new Error(`the analysis worker exited with code ${code} before answering`) }));
  });
}
