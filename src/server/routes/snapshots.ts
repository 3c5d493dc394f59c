/**
 * /api/v1/…/snapshots: the `gpumem snapshot` analysis and the allocator's what-if answers for a PyTorch memory
 * snapshot, either one a supervised run wrote on OOM (only files its history report names, and only inside the
 * history's run folders) or one uploaded in the request body (bounded size, the token or the page's own
 * header, bounded uploads at once). Every snapshot goes through the data-only reader: nothing in a file is
 * executed; the reading and the what-if replays run in a worker thread under a time budget.
 */
import { realpathSync, statSync } from 'node:fs';
import { basename, sep } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { storedSnapshotFiles } from '../../core/run/index.js';
import { getRun } from '../../store/index.js';
import { runSnapshotsDocument } from '../documents/run-snapshots.js';
import type { AnalysisJob } from '../analysis/job.js';
import { analyseInWorker, type AnalysisLimits } from '../analysis/run-analysis.js';
import { uploadRefusal } from '../http/guard.js';
import { send, sendError, sendJson } from '../http/respond.js';
import type { WorkGate } from '../http/work-gate.js';
import type { ServerState } from '../state.js';
import { SERVE_SCHEMA_VERSION } from '../../core/documents/server.js';

/** Default upload limit: a snapshot of a long trace is tens of MB; this leaves room without letting a client fill memory. */
export const DEFAULT_MAX_UPLOAD_BYTES = 256 * 1024 * 1024;
const MAX_WHAT_IFS = 8;

/** The real path of `file` when it is a regular file inside `folder`; null otherwise (missing, a link out, not a file). */
function insideFolder(file: string, folder: string | null): { path: string; sizeBytes: number } | null {
  if (folder === null) return null;
  try {
    const real = realpathSync(file);
    const root = realpathSync(folder);
    const stat = statSync(real);
    return real.startsWith(root + sep) && stat.isFile() ? { path: real, sizeBytes: stat.size } : null;
  } catch {
    return null;
  }
}

/** Reads the analysis options from the query: whatIf (repeated), top, request (bytes), simulate, torchVersion. */
function queryOptions(url: URL): { whatIfs: string[]; top: number; requestBytes: number | null; simulate: boolean; torchVersion: string | null } | string {
  const whatIfs = url.searchParams.getAll('whatIf').map((w) => w.trim()).filter((w) => w.length > 0);
  if (whatIfs.length > MAX_WHAT_IFS) return `at most ${MAX_WHAT_IFS} whatIf settings`;
  const top = url.searchParams.get('top') ?? '10';
  if (!/^\d{1,3}$/.test(top) || Number(top) < 1) return 'top must be a whole number from 1 to 999';
  const request = url.searchParams.get('request');
  if (request !== null && !/^\d{1,15}$/.test(request)) return 'request must be a whole number of bytes';
  const torchVersion = url.searchParams.get('torchVersion');
  if (torchVersion !== null && !/^\d{1,2}\.\d{1,3}$/.test(torchVersion)) return 'torchVersion must look like 2.4';
  const simulate = url.searchParams.get('simulate');
  return { whatIfs, top: Number(top), requestBytes: request === null ? null : Number(request), simulate: simulate === '1' || simulate === 'true', torchVersion };
}

/** What the snapshot routes need from the app: the token, the bounds on work, and the log. */
export interface SnapshotContext {
  /** The action token; null with --readonly (uploads then come only from the page). */
  token: string | null;
  maxUploadBytes: number;
  gate: WorkGate;
  limits: AnalysisLimits;
  /** Aborted when the server stops: running analyses are ended. */
  stopping: AbortSignal;
  /** One line for the server log about a request that failed because of its input. */
  warn: (line: string) => void;
  /** A failure that is not the client's (logged with its stack). */
  onError: (error: unknown) => void;
}

const RETRY_AFTER_S = 5;

/** Refuses a request without reading its body (the rest of the body is read and dropped, never kept). */
function refuse(req: IncomingMessage, res: ServerResponse, status: number, code: string, message: string, extra: Record<string, string> = {}): void {
  req.resume();
  sendError(res, status, code, message, extra);
}

function busy(req: IncomingMessage, res: ServerResponse): void {
  refuse(req, res, 503, 'BUSY', 'the server is analysing other snapshots; try again in a few seconds', { 'Retry-After': String(RETRY_AFTER_S) });
}

/** Runs the analysis in a worker and answers; every failure becomes one JSON error (a bug also goes to the log). */
async function answer(res: ServerResponse, job: AnalysisJob, ctx: SnapshotContext): Promise<void> {
  const result = await analyseInWorker(job, ctx.limits, ctx.stopping);
  switch (result.kind) {
    case 'ok':
      return send(res, 200, 'application/json; charset=utf-8', result.text, { 'Cache-Control': 'no-store' });
    case 'refused': {
      const status = result.code === 'INPUT_TOO_LARGE' ? 413 : result.code === 'INPUT_NOT_FOUND' ? 404 : 400;
      return sendError(res, status, result.code, result.message);
    }
    case 'unreadable':
      // The reader met a shape it does not expect: the file's fault as far as this request goes, one line.
      ctx.warn(`${job.label}: not a snapshot gpumem can read (${result.message})`);
      return sendError(res, 422, 'SNAPSHOT_UNREADABLE', `${job.label}: not a snapshot gpumem can read (${result.message})`);
    case 'timeout':
      ctx.warn(`${job.label}: analysis stopped after ${result.limitMs / 1000} s`);
      return sendError(res, 503, 'ANALYSIS_TIMEOUT', `${job.label}: the analysis took over ${result.limitMs / 1000} s and was stopped; run gpumem snapshot FILE on the command line`);
    case 'memory':
      ctx.warn(`${job.label}: analysis stopped at its ${result.limitMb} MiB memory bound`);
      return sendError(res, 413, 'ANALYSIS_TOO_LARGE', `${job.label}: the analysis needs more than ${result.limitMb} MiB; run gpumem snapshot FILE on the command line`);
    case 'stopped':
      return sendError(res, 503, 'STOPPING', 'the server is stopping');
    case 'crashed':
      ctx.onError(result.error);
      return sendError(res, 500, 'INTERNAL', 'internal error (see the server log)');
  }
}

function job(input: AnalysisJob['input'], label: string, url: URL, options: AnalysisJob['options'], source: AnalysisJob['source']): AnalysisJob {
  return { input, label, options, view: url.searchParams.get('view') === 'page' ? 'page' : 'cli', source, schemaVersion: SERVE_SCHEMA_VERSION };
}

/** GET /api/v1/runs/{id}/snapshots[/{n}]; returns false when the path is not one of these. */
export function handleRunSnapshots(req: IncomingMessage, res: ServerResponse, url: URL, state: ServerState, ctx: SnapshotContext): boolean {
  const m = /^\/api\/v1\/runs\/(\d{1,12})\/snapshots(?:\/(\d{1,4}))?$/.exec(url.pathname);
  if (!m) return false;
  const db = state.history();
  const found = db ? getRun(db, Number(m[1])) : null;
  if (!found) {
    sendError(res, 404, 'NOT_FOUND', `no run ${m[1]} in the history`);
    return true;
  }
  const folder = state.runsFolder();
  const files = storedSnapshotFiles(found.report).map((file, index) => ({ index, file, name: basename(file), readable: insideFolder(file, folder) }));
  if (m[2] === undefined) {
    sendJson(res, 200, runSnapshotsDocument(
      found.run.id,
      files.map((f) => ({ index: f.index, file: f.file, name: f.name, available: f.readable !== null, sizeBytes: f.readable?.sizeBytes ?? null })),
    ));
    return true;
  }
  const chosen = files[Number(m[2])];
  if (!chosen) sendError(res, 404, 'NOT_FOUND', `run ${m[1]} has no snapshot ${m[2]}`);
  else if (!chosen.readable) sendError(res, 404, 'SNAPSHOT_GONE', `${chosen.name}: the file is gone or lies outside the history's run folders`);
  else {
    const options = queryOptions(url);
    if (typeof options === 'string') {
      sendError(res, 400, 'BAD_QUERY', options);
      return true;
    }
    // A file of one's own run holds no upload bytes, but its analysis takes a job slot like any other.
    const ticket = ctx.gate.enter(0);
    if (!ticket) {
      busy(req, res);
      return true;
    }
    const real = chosen.readable;
    answer(res, job({ path: real.path }, chosen.name, url, options, { name: chosen.name, sizeBytes: real.sizeBytes }), ctx)
      .catch((error: unknown) => ctx.onError(error))
      .finally(() => ticket.release());
  }
  return true;
}

/**
 * POST /api/v1/snapshots: the body is a snapshot file (pickle or JSON), at most `maxUploadBytes`. Refused
 * before the body is read when it lacks the token or the page's header, when its query is wrong, when it
 * says it is too large, or when the server already holds as many uploads or bytes as it takes at once.
 */
export function handleSnapshotUpload(req: IncomingMessage, res: ServerResponse, url: URL, ctx: SnapshotContext): void {
  const refusal = uploadRefusal(req, ctx.token);
  if (refusal) return refuse(req, res, refusal.status, refusal.code, refusal.message);
  const options = queryOptions(url);
  if (typeof options === 'string') return refuse(req, res, 400, 'BAD_QUERY', options);
  const tooLarge = `the upload is over ${ctx.maxUploadBytes} bytes`;
  const header = req.headers['content-length'];
  // Node's parser has already refused a Content-Length that is not a number, and keeps the body to it.
  const declared = header === undefined ? null : Number(header);
  if (declared !== null && declared > ctx.maxUploadBytes) return refuse(req, res, 413, 'INPUT_TOO_LARGE', tooLarge);
  const ticket = ctx.gate.enter(declared ?? 0);
  if (!ticket) return busy(req, res);
  // With a length the body goes straight into its own buffer (moved, not copied, to the worker).
  let body: Uint8Array | null = declared === null ? null : new Uint8Array(declared);
  const chunks: Buffer[] = [];
  let total = 0;
  let done = false;
  const stop = (): void => {
    done = true;
    body = null;
    chunks.length = 0;
    ticket.release();
  };
  req.on('data', (chunk: Buffer) => {
    if (done) return;
    if (total + chunk.length > ctx.maxUploadBytes) {
      stop();
      return refuse(req, res, 413, 'INPUT_TOO_LARGE', tooLarge);
    }
    if (body) body.set(chunk, total);
    else if (ticket.grow(chunk.length)) chunks.push(chunk);
    else {
      stop();
      return busy(req, res);
    }
    total += chunk.length;
  });
  req.on('end', () => {
    if (done) return;
    done = true;
    if (total === 0) {
      ticket.release();
      return sendError(res, 400, 'EMPTY_BODY', 'send the snapshot file as the request body');
    }
    let bytes = body;
    if (!bytes) {
      bytes = new Uint8Array(total);
      let at = 0;
      for (const c of chunks) {
        bytes.set(c, at);
        at += c.length;
      }
      chunks.length = 0;
    }
    body = null;
    answer(res, job({ bytes }, 'upload', url, options, { name: 'upload', sizeBytes: total }), ctx)
      .catch((error: unknown) => ctx.onError(error))
      .finally(() => ticket.release());
  });
  // A client that goes away mid-upload only loses its own request, and gives its share back.
  req.on('close', () => {
    if (!done) stop();
  });
  req.on('error', () => {
    if (!done) stop();
  });
}
