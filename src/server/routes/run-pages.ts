/**
 * The page's run views: /api/v1/page/compare?a=ID&b=ID (two runs side by side) and
 * /api/v1/page/runs/ID/split (the PyTorch split at each GPU's peak; `perSample` says whether the run also
 * has it over time, in its samples) and /api/v1/page/runs/ID/steps (step timing per attempt and process). Formatted for the page; the JSON API's
 * /api/v1/runs/ID carries the same numbers unformatted.
 */
import type { ServerResponse } from 'node:http';
import { getRun } from '../../store/index.js';
import { sendError, sendJson } from '../http/respond.js';
import { compareView, hasSplitTimeline, splitView, stepsView } from '../run-view.js';
import type { ServerState } from '../state.js';
import { pageCompareDocument } from '../documents/page-compare.js';
import { pageSplitDocument } from '../documents/page-split.js';
import { pageStepsDocument } from '../documents/page-steps.js';

/** Handles the page's run views; returns false when the path is not one of them. */
export function handleRunPages(res: ServerResponse, url: URL, state: ServerState): boolean {
  const db = state.history();
  const load = (id: string | null): ReturnType<typeof getRun> | string => {
    if (id === null || !/^\d{1,12}$/.test(id)) return 'a and b must be run ids';
    return (db ? getRun(db, Number(id)) : null) ?? `no run ${id} in the history`;
  };
  if (url.pathname === '/api/v1/page/compare') {
    const a = load(url.searchParams.get('a'));
    const b = load(url.searchParams.get('b'));
    const bad = [a, b].find((x): x is string => typeof x === 'string');
    if (bad !== undefined) sendError(res, bad.startsWith('no run') ? 404 : 400, bad.startsWith('no run') ? 'NOT_FOUND' : 'BAD_QUERY', bad);
    else if (a && b && typeof a !== 'string' && typeof b !== 'string') {
      sendJson(res, 200, pageCompareDocument(a.run.id, b.run.id, compareView(a, b)));
    }
    return true;
  }
  const m = /^\/api\/v1\/page\/runs\/(\d{1,12})\/(split|steps)$/.exec(url.pathname);
  if (!m) return false;
  const found = load(m[1] ?? null);
  if (typeof found === 'string' || !found) sendError(res, 404, 'NOT_FOUND', `no run ${m[1]} in the history`);
  else if (m[2] === 'steps') sendJson(res, 200, pageStepsDocument(found.run.id, stepsView(found.report)));
  else sendJson(res, 200, pageSplitDocument(found.run.id, splitView(found.report), hasSplitTimeline(found.report)));
  return true;
}
