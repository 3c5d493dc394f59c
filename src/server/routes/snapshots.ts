/**
 * /api/v1/…/snapshots: the `gpumem snapshot` analysis and the allocator's what-if answers for a PyTorch memory
 * snapshot, either one a supervised run wrote on OOM (only files its history report names, and only inside the
 * history's run folders) or one uploaded in the request body (bounded size). Every snapshot goes through the
 * data-only reader: nothing in a file is executed.
 */
import { realpathSync, statSync } from 'node:fs';
import { basename, sep } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isGpumemError } from '../../core/index.js';
import { storedSnapshotFiles } from '../../core/run/index.js';
import type { MemorySnapshot } from '../../core/snapshot/index.js';
import { analyseSnapshot, snapshotAnalysisJson, toJsonText } from '../../orchestrate/index.js';
import { readSnapshotBytes, readSnapshotFile } from '../../sources/index.js';
import { getRun, RUNS_SCHEMA_VERSION } from '../../store/index.js';
import { send, sendError, sendJson } from '../http/respond.js';
import type { ServerState } from '../state.js';
import { snapshotView } from '../snapshot-view.js';
import { SERVE_SCHEMA_VERSION } from './api.js';

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

function answer(res: ServerResponse, url: URL, source: { name: string; sizeBytes: number }, read: () => MemorySnapshot): void {
  const options = queryOptions(url);
  if (typeof options === 'string') return sendError(res, 400, 'BAD_QUERY', options);
  try {
    const analysis = analyseSnapshot(read(), options);
    // view=page: what the page shows, sizes formatted; otherwise the CLI's --json document.
    const doc = url.searchParams.get('view') === 'page'
      ? { schemaVersion: SERVE_SCHEMA_VERSION, kind: 'gpumem.page-snapshot', source, devices: snapshotView(analysis) }
      : { ...snapshotAnalysisJson(analysis), source };
    send(res, 200, 'application/json; charset=utf-8', toJsonText(doc), { 'Cache-Control': 'no-store' });
  } catch (error) {
    if (!isGpumemError(error)) throw error;
    const status = error.code === 'INPUT_TOO_LARGE' ? 413 : error.code === 'INPUT_NOT_FOUND' ? 404 : 400;
    sendError(res, status, error.code, error.message);
  }
}

/** GET /api/v1/runs/{id}/snapshots[/{n}]; returns false when the path is not one of these. */
export function handleRunSnapshots(res: ServerResponse, url: URL, state: ServerState): boolean {
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
    sendJson(res, 200, {
      schemaVersion: RUNS_SCHEMA_VERSION,
      kind: 'gpumem.run-snapshots',
      runId: found.run.id,
      snapshots: files.map((f) => ({ index: f.index, file: f.file, name: f.name, available: f.readable !== null, sizeBytes: f.readable?.sizeBytes ?? null })),
    });
    return true;
  }
  const chosen = files[Number(m[2])];
  if (!chosen) sendError(res, 404, 'NOT_FOUND', `run ${m[1]} has no snapshot ${m[2]}`);
  else if (!chosen.readable) sendError(res, 404, 'SNAPSHOT_GONE', `${chosen.name}: the file is gone or lies outside the history's run folders`);
  else {
    const real = chosen.readable;
    answer(res, url, { name: chosen.name, sizeBytes: real.sizeBytes }, () => readSnapshotFile(real.path));
  }
  return true;
}

/** POST /api/v1/snapshots: the body is a snapshot file (pickle or JSON), at most `maxBytes`. */
export function handleSnapshotUpload(req: IncomingMessage, res: ServerResponse, url: URL, maxBytes: number, onError: (error: unknown) => void): void {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume();
    return sendError(res, 413, 'INPUT_TOO_LARGE', `the upload is over ${maxBytes} bytes`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  let refused = false;
  req.on('data', (chunk: Buffer) => {
    if (refused) return;
    total += chunk.length;
    if (total > maxBytes) {
      refused = true;
      chunks.length = 0;
      sendError(res, 413, 'INPUT_TOO_LARGE', `the upload is over ${maxBytes} bytes`);
      req.resume();
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (refused) return;
    if (total === 0) return sendError(res, 400, 'EMPTY_BODY', 'send the snapshot file as the request body');
    const bytes = Buffer.concat(chunks, total);
    chunks.length = 0;
    try {
      answer(res, url, { name: 'upload', sizeBytes: total }, () => readSnapshotBytes(bytes, 'upload'));
    } catch (error) {
      onError(error);
      if (!res.headersSent) sendError(res, 500, 'INTERNAL', 'internal error (see the server log)');
    }
  });
  // A client that goes away mid-upload only loses its own request.
  req.on('error', () => {
    refused = true;
    chunks.length = 0;
  });
}
