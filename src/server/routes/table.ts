/**
 * Every HTTP route of `gpumem serve`, as data: its method and path, what it answers, and for each status the
 * public document it sends (a kind of the registry in server/documents/), an error, or text. docs/serve.openapi.json
 * is generated from this table and the documents' schemas (`npm run docs`, server/openapi.ts), and the suite
 * asks a real server every route and checks each answer against the document this table names.
 */

/** What one status answers: a registered document (or one of several), the error document, or text. */
export interface RouteResponse {
  description: string;
  body?: string | readonly string[] | 'error';
  /** Media types of a non-JSON answer (the event stream, Prometheus text). */
  text?: readonly string[];
  headers?: Record<string, unknown>;
}

export interface Route {
  method: 'GET' | 'POST';
  /** OpenAPI path template: {id} for a run id, {n} for a snapshot's index, {pid} for a process id. */
  path: string;
  summary: string;
  /** OpenAPI parameter objects, as written into the file. */
  parameters?: ReadonlyArray<Record<string, unknown>>;
  requestBody?: Record<string, unknown>;
  security?: ReadonlyArray<Record<string, unknown>>;
  responses: Record<string, RouteResponse>;
}

const ERROR: RouteResponse = { description: 'error', body: 'error' };
const UNREADABLE: RouteResponse = {
  description: "the run's stored record cannot be read (written by another version, or damaged: RECORD_UNREADABLE); one line goes to the server log",
  body: 'error',
};
const ID = { name: 'id', in: 'path', required: true, schema: { type: 'integer' } };
/** The snapshot analysis's options, as `gpumem snapshot`'s. */
const SNAPSHOT_QUERY = [
  { name: 'whatIf', in: 'query', required: false, description: 'PYTORCH_CUDA_ALLOC_CONF settings to replay the trace under (as --what-if); repeat for several, at most 8', schema: { type: 'array', items: { type: 'string' } }, style: 'form', explode: true },
  { name: 'simulate', in: 'query', required: false, description: "1: replay under the run's own settings (as --simulate)", schema: { type: 'string', enum: ['1', 'true'] } },
  { name: 'top', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 999, default: 10 } },
  { name: 'request', in: 'query', required: false, description: 'bytes of a request to check (as --request)', schema: { type: 'integer', minimum: 0 } },
  { name: 'torchVersion', in: 'query', required: false, description: 'PyTorch release the run used, X.Y (as --torch-version)', schema: { type: 'string', pattern: '^\\d{1,2}\\.\\d{1,3}$' } },
  { name: 'view', in: 'query', required: false, description: "page: the analysis as the page shows it, in text rows (gpumem.page-snapshot); otherwise gpumem snapshot --json's document", schema: { type: 'string', enum: ['page'] } },
];

/** A route whose 200 answer is `ok`; each status in `errors` answers the error document, or the answer given with it. */
function route(
  method: Route['method'], path: string, summary: string, ok: RouteResponse,
  errors: ReadonlyArray<number | readonly [number, RouteResponse]>, more: Pick<Route, 'parameters' | 'requestBody' | 'security'> = {},
): Route {
  const responses: Record<string, RouteResponse> = { 200: ok };
  for (const e of errors) {
    if (typeof e === 'number') responses[e] = ERROR;
    else responses[e[0]] = e[1];
  }
  return { method, path, summary, ...more, responses };
}
const doc = (description: string, body: NonNullable<RouteResponse['body']>): RouteResponse => ({ description, body });
const error = (description: string): RouteResponse => ({ description, body: 'error' });
/** The answer of a run's route whose run or stored record may be missing. */
const RUN_ERRORS = [404, [422, UNREADABLE]] as const;
const SNAPSHOT_ANSWER = doc('the gpumem snapshot --json document (docs/snapshot.md), each device with `simulation` when whatIf or simulate was given, plus `source: { name, sizeBytes }`; with view=page, text rows for the page (gpumem.page-snapshot)', ['gpumem.snapshot', 'gpumem.page-snapshot']);

export const ROUTES: readonly Route[] = [
  route('GET', '/api/v1/status', 'The newest sample as `gpumem status --json` (docs/status.md)', doc('status document', 'gpumem.status'), [503]),
  route('GET', '/api/v1/processes', 'GPU processes of the newest sample', doc('processes document', 'gpumem.processes'), [503]),
  route('GET', '/api/v1/diagnosis', '`gpumem diagnose --json` over the newest samples (docs/diagnose.md)', doc('diagnose document', 'gpumem.diagnose'), [503]),
  route('GET', '/api/v1/findings', 'Findings of the latest diagnosis', doc('findings document', 'gpumem.findings'), [503]),
  route('GET', '/api/v1/live', "The newest samples' per-GPU numbers (the page's charts)", doc('live series', 'gpumem.live'), [400],
    { parameters: [{ name: 'last', in: 'query', schema: { type: 'integer', minimum: 0, default: 300 } }] }),
  route('GET', '/api/v1/runs', '`gpumem runs --json`', doc('runs document', 'gpumem.runs'), [400],
    { parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 20 } }] }),
  route('GET', '/api/v1/runs/{id}', '`gpumem runs show ID --json`', doc('run and its stored report', 'gpumem.run-detail'), RUN_ERRORS, { parameters: [ID] }),
  route('GET', '/api/v1/runs/{id}/samples',
    "A run's memory timeline, peaks, OOMs, PyTorch summary and PyTorch split over time (pytorchTimeline: [{ tMs, allocatedBytes: {uuid: bytes}, reservedBytes: {uuid: bytes} }], empty for runs recorded before it was kept) per attempt",
    doc('run samples', 'gpumem.run-samples'), RUN_ERRORS, { parameters: [ID] }),
  route('GET', '/api/v1/events',
    "Server-sent events: `event: sample` with `{ live, view }` per new sample. A stream's first message also has `server` ({ hostname, readonly }) and `history` (the chart points, as /api/v1/live); later messages leave out `view.processes` and `view.findings` while they are unchanged",
    { description: 'event stream', text: ['text/event-stream'] }, [503]),
  route('GET', '/api/v1/server', 'Facts about this server', doc('server facts', 'gpumem.server'), []),
  route('POST', '/api/v1/processes/{pid}/kill', 'End one GPU process through the checks of `gpumem kill PID`',
    doc('the process ended; rows and outcomes as `gpumem kill --json`', 'gpumem.kill'),
    [[400, error("not a process id: more than 4194304 (Linux's PID_MAX_LIMIT) or not a number (BAD_PID)")], 401, 403, 404, 405,
      [409, doc('refused or not ended; the outcomes say why', 'gpumem.kill')]],
    { parameters: [{ name: 'pid', in: 'path', required: true, schema: { type: 'integer' } }], security: [{ token: [] }] }),
  route('GET', '/metrics', 'Prometheus text format, or OpenMetrics when Accept asks for application/openmetrics-text (docs/serve.md lists the metrics)',
    { description: 'exposition', text: ['text/plain', 'application/openmetrics-text'] }, [503]),
  route('GET', '/api/v1/runs/{id}/snapshots',
    "The memory snapshots a run wrote on OOM (--snapshot-on-oom), with whether each can be read (a regular file inside the history's run folders)",
    doc('{ schemaVersion, kind: gpumem.run-snapshots, runId, snapshots: [{ index, file, name, available, sizeBytes }] }', 'gpumem.run-snapshots'), RUN_ERRORS, { parameters: [ID] }),
  route('GET', '/api/v1/runs/{id}/snapshots/{n}', "A run's snapshot analysed as by gpumem snapshot --json, with allocator what-ifs", SNAPSHOT_ANSWER,
    [400, 404, [422, error('a file the snapshot reader cannot take (SNAPSHOT_UNREADABLE)')],
      [503, error('as many analyses as the server takes at once are running (BUSY, Retry-After: 5), or the analysis went over its time budget (ANALYSIS_TIMEOUT)')]],
    { parameters: [ID, { name: 'n', in: 'path', required: true, schema: { type: 'integer', minimum: 0 } }, ...SNAPSHOT_QUERY] }),
  route('POST', '/api/v1/snapshots',
    "An uploaded snapshot (pickle or JSON, at most 256 MiB) analysed as by gpumem snapshot --json; read by the data-only reader, never executed; analysed in a worker thread under a time budget. Needs the token or the page's header; at most 2 uploads or analyses and 256 MiB of upload bodies at once",
    SNAPSHOT_ANSWER,
    [400, [401, error('no token and no page header, or a wrong token (TOKEN)')], [403, error('the page header on a request from another site or origin (CROSS_SITE)')], 405,
      [413, error('an upload over 256 MiB (INPUT_TOO_LARGE), or an analysis over its memory bound (ANALYSIS_TOO_LARGE)')],
      [422, error('a file the snapshot reader cannot take (SNAPSHOT_UNREADABLE); one line goes to the server log')],
      [503, { description: 'the server already holds as many uploads or analyses as it takes at once (BUSY, with Retry-After: 5), or the analysis went over its time budget of 60 s (ANALYSIS_TIMEOUT)', headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'seconds, with BUSY' } }, body: 'error' }]],
    {
      parameters: SNAPSHOT_QUERY,
      requestBody: { required: true, content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
      security: [{ token: [] }, { page: [] }],
    }),
  route('GET', '/api/v1/page/compare', 'Two runs side by side, formatted for the page: peaks, durations, OOMs, PyTorch peaks, cleanup verdicts',
    doc('{ schemaVersion, kind: gpumem.page-compare, a, b, rows: [[label, A, B]] }', 'gpumem.page-compare'), [400, ...RUN_ERRORS],
    { parameters: [{ name: 'a', in: 'query', required: true, schema: { type: 'integer' } }, { name: 'b', in: 'query', required: true, schema: { type: 'integer' } }] }),
  route('GET', '/api/v1/page/runs', "The Runs page's list, formatted for the page: the newest 50 runs and the newest 20 pipelines with each stage's run",
    doc('page runs', 'gpumem.page-runs'), []),
  route('GET', '/api/v1/page/runs/{id}/split', "The PyTorch split of a run at each GPU's peak; perSample is true when the run's samples also carry the split over time",
    doc('{ schemaVersion, kind: gpumem.page-split, runId, perSample, splits }', 'gpumem.page-split'), RUN_ERRORS, { parameters: [ID] }),
  route('GET', '/api/v1/page/runs/{id}/steps', 'Step timing of a run per attempt and process that took steps, with the figures in words',
    doc('{ schemaVersion, kind: gpumem.page-steps, runId, steps }', 'gpumem.page-steps'), RUN_ERRORS, { parameters: [ID] }),
];
