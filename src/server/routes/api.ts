/**
 * /api/v1: the JSON API. Documents are the ones the CLI prints with --json (status, diagnose, runs), so a
 * script can switch between `gpumem … --json` and the server freely. docs/serve.openapi.json lists them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { reportJson } from '../../core/documents/diagnose.js';
import { findingsDocument } from '../../core/documents/findings.js';
import { liveDocument } from '../../core/documents/live.js';
import { processesDocument } from '../../core/documents/processes.js';
import { runDetailDocument } from '../../core/documents/run-detail.js';
import { runsDocument } from '../../core/documents/runs.js';
import { serverDocument } from '../../core/documents/server.js';
import { statusJson } from '../../core/documents/status.js';
import type { Sample } from '../../core/types.js';
import { getRun, listPipelines, listRuns } from '../../store/index.js';
import type { StoredRunReport } from '../../core/run/index.js';
import { sendError, sendJson } from '../http/respond.js';
import type { ServerState } from '../state.js';
import type { RunSamplesAttempt } from '../page-docs.js';
import { pageRunsDocument } from '../documents/page-runs.js';
import { runSamplesDocument } from '../documents/run-samples.js';
import { pipelinesView, runsView } from '../view.js';

function whole(text: string | null, fallback: number, max: number): number | null {
  if (text === null) return fallback;
  if (!/^\d{1,9}$/.test(text)) return null;
  return Math.min(Number(text), max);
}

/** Handles GET /api/v1/…; returns false when the path is not an API read. */
export function handleApiRead(req: IncomingMessage, res: ServerResponse, url: URL, state: ServerState, facts: { readonly: boolean }): boolean {
  const path = url.pathname;
  const latest = state.latest();
  const needSample = (): Sample | null => {
    if (latest) return latest;
    sendError(res, 503, 'NO_SAMPLE_YET', 'the first GPU sample is not in yet; retry in a moment');
    return null;
  };
  if (path === '/api/v1/server') {
    sendJson(res, 200, serverDocument(state.hostname, facts));
    return true;
  }
  if (path === '/api/v1/status') {
    const s = needSample();
    if (s) sendJson(res, 200, statusJson(s));
    return true;
  }
  if (path === '/api/v1/processes') {
    const s = needSample();
    if (s) sendJson(res, 200, processesDocument(s));
    return true;
  }
  if (path === '/api/v1/diagnosis' || path === '/api/v1/findings') {
    const report = state.diagnosis();
    if (!report) sendError(res, 503, 'NO_SAMPLE_YET', 'the first GPU sample is not in yet; retry in a moment');
    else if (path === '/api/v1/findings') sendJson(res, 200, findingsDocument(report));
    else sendJson(res, 200, reportJson(report, 'diagnose', null, null));
    return true;
  }
  if (path === '/api/v1/live') {
    const last = whole(url.searchParams.get('last'), 300, 100_000);
    if (last === null) sendError(res, 400, 'BAD_QUERY', 'last must be a whole number');
    else sendJson(res, 200, liveDocument(state.liveRows(last)));
    return true;
  }
  if (path === '/api/v1/runs') {
    const limit = whole(url.searchParams.get('limit'), 20, 1000);
    if (limit === null) sendError(res, 400, 'BAD_QUERY', 'limit must be a whole number');
    else {
      const db = state.history();
      sendJson(res, 200, runsDocument(db ? listRuns(db, Math.max(1, limit)) : [], db ? listPipelines(db, Math.max(1, limit)) : []));
    }
    return true;
  }
  if (path === '/api/v1/page/runs') {
    const db = state.history();
    sendJson(res, 200, pageRunsDocument(runsView(db ? listRuns(db, 50) : []), pipelinesView(db ? listPipelines(db, 20) : [])));
    return true;
  }
  const run = /^\/api\/v1\/runs\/(\d{1,12})(\/samples)?$/.exec(path);
  if (run) {
    const db = state.history();
    const found = db ? getRun(db, Number(run[1])) : null;
    if (!found) sendError(res, 404, 'NOT_FOUND', `no run ${run[1]} in the history`);
    else if (run[2]) sendJson(res, 200, runSamplesDocument(found.run.id, attemptSeries(found.report)));
    else sendJson(res, 200, runDetailDocument(found.run, found.report?.document ?? null, found.report?.damage ?? []));
    return true;
  }
  return false;
}

/** Each attempt's memory timeline, PyTorch summary and PyTorch split over time from a stored report (docs/run.md). */
function attemptSeries(report: StoredRunReport | null): RunSamplesAttempt[] {
  return (report?.attempts ?? []).map((a) => ({
    attempt: a.attempt,
    timeline: a.timeline,
    peaks: a.peaks,
    ooms: a.ooms,
    pytorch: a.plugins.companion?.gpus ?? [],
    // Runs recorded before the history kept the split over time have none.
    pytorchTimeline: a.plugins.companion?.splitTimeline ?? [],
  }));
}
