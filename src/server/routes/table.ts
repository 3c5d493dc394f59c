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

export const ROUTES: readonly Route[] = [
  {
    method: 'GET', path: '/api/v1/status',
    summary: 'The newest sample as `gpumem status --json` (docs/status.md)',
    responses: {
      200: { description: 'status document', body: 'gpumem.status' },
      503: ERROR,
    },
  },
  {
    method: 'GET', path: '/api/v1/processes',
    summary: 'GPU processes of the newest sample',
    responses: {
      200: { description: 'processes document', body: 'gpumem.processes' },
      503: ERROR,
    },
  },
  {
    method: 'GET', path: '/api/v1/diagnosis',
    summary: '`gpumem diagnose --json` over the newest samples (docs/diagnose.md)',
    responses: {
      200: { description: 'diagnose document', body: 'gpumem.diagnose' },
      503: ERROR,
    },
  },
  {
    method: 'GET', path: '/api/v1/findings',
    summary: 'Findings of the latest diagnosis',
    responses: {
      200: { description: 'findings document', body: 'gpumem.findings' },
      503: ERROR,
    },
  },
  {
    method: 'GET', path: '/api/v1/live',
    summary: "The newest samples' per-GPU numbers (the page's charts)",
    parameters: [{ name: 'last', in: 'query', schema: { type: 'integer', minimum: 0, default: 300 } }],
    responses: {
      200: { description: 'live series', body: 'gpumem.live' },
      400: ERROR,
    },
  },
  {
    method: 'GET', path: '/api/v1/runs',
    summary: '`gpumem runs --json`',
    parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 20 } }],
    responses: {
      200: { description: 'runs document', body: 'gpumem.runs' },
      400: ERROR,
    },
  },
  {
    method: 'GET', path: '/api/v1/runs/{id}',
    summary: '`gpumem runs show ID --json`',
    parameters: [ID],
    responses: {
      200: { description: 'run and its stored report', body: 'gpumem.run-detail' },
      404: ERROR,
      422: UNREADABLE,
    },
  },
  {
    method: 'GET', path: '/api/v1/runs/{id}/samples',
    summary: "A run's memory timeline, peaks, OOMs, PyTorch summary and PyTorch split over time (pytorchTimeline: [{ tMs, allocatedBytes: {uuid: bytes}, reservedBytes: {uuid: bytes} }], empty for runs recorded before it was kept) per attempt",
    parameters: [ID],
    responses: {
      200: { description: 'run samples', body: 'gpumem.run-samples' },
      404: ERROR,
      422: UNREADABLE,
    },
  },
  {
    method: 'GET', path: '/api/v1/events',
    summary: "Server-sent events: `event: sample` with `{ live, view }` per new sample. A stream's first message also has `server` ({ hostname, readonly }) and `history` (the chart points, as /api/v1/live); later messages leave out `view.processes` and `view.findings` while they are unchanged",
    responses: {
      200: { description: 'event stream', text: ['text/event-stream'] },
      503: ERROR,
    },
  },
  {
    method: 'GET', path: '/api/v1/server',
    summary: 'Facts about this server',
    responses: {
      200: { description: 'server facts', body: 'gpumem.server' },
    },
  },
  {
    method: 'POST', path: '/api/v1/processes/{pid}/kill',
    summary: 'End one GPU process through the checks of `gpumem kill PID`',
    parameters: [{ name: 'pid', in: 'path', required: true, schema: { type: 'integer' } }],
    security: [{ token: [] }],
    responses: {
      200: { description: 'the process ended; rows and outcomes as `gpumem kill --json`', body: 'gpumem.kill' },
      400: { description: "not a process id: more than 4194304 (Linux's PID_MAX_LIMIT) or not a number (BAD_PID)", body: 'error' },
      401: ERROR,
      403: ERROR,
      404: ERROR,
      405: ERROR,
      409: { description: 'refused or not ended; the outcomes say why', body: 'gpumem.kill' },
    },
  },
  {
    method: 'GET', path: '/metrics',
    summary: 'Prometheus text format, or OpenMetrics when Accept asks for application/openmetrics-text (docs/serve.md lists the metrics)',
    responses: {
      200: { description: 'exposition', text: ['text/plain', 'application/openmetrics-text'] },
      503: ERROR,
    },
  },
  {
    method: 'GET', path: '/api/v1/runs/{id}/snapshots',
    summary: "The memory snapshots a run wrote on OOM (--snapshot-on-oom), with whether each can be read (a regular file inside the history's run folders)",
    parameters: [ID],
    responses: {
      200: { description: '{ schemaVersion, kind: gpumem.run-snapshots, runId, snapshots: [{ index, file, name, available, sizeBytes }] }', body: 'gpumem.run-snapshots' },
      404: ERROR,
      422: UNREADABLE,
    },
  },
  {
    method: 'GET', path: '/api/v1/runs/{id}/snapshots/{n}',
    summary: "A run's snapshot analysed as by gpumem snapshot --json, with allocator what-ifs",
    parameters: [ID, { name: 'n', in: 'path', required: true, schema: { type: 'integer', minimum: 0 } }, ...SNAPSHOT_QUERY],
    responses: {
      200: { description: 'the gpumem snapshot --json document (docs/snapshot.md), each device with `simulation` when whatIf or simulate was given, plus `source: { name, sizeBytes }`; with view=page, text rows for the page (gpumem.page-snapshot)', body: ['gpumem.snapshot', 'gpumem.page-snapshot'] },
      400: ERROR,
      404: ERROR,
      422: { description: 'a file the snapshot reader cannot take (SNAPSHOT_UNREADABLE)', body: 'error' },
      503: { description: 'as many analyses as the server takes at once are running (BUSY, Retry-After: 5), or the analysis went over its time budget (ANALYSIS_TIMEOUT)', body: 'error' },
    },
  },
  {
    method: 'POST', path: '/api/v1/snapshots',
    summary: "An uploaded snapshot (pickle or JSON, at most 256 MiB) analysed as by gpumem snapshot --json; read by the data-only reader, never executed; analysed in a worker thread under a time budget. Needs the token or the page's header; at most 2 uploads or analyses and 256 MiB of upload bodies at once",
    parameters: SNAPSHOT_QUERY,
    requestBody: { required: true, content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
    security: [{ token: [] }, { page: [] }],
    responses: {
      200: { description: 'the gpumem snapshot --json document (docs/snapshot.md), each device with `simulation` when whatIf or simulate was given, plus `source: { name, sizeBytes }`; with view=page, text rows for the page (gpumem.page-snapshot)', body: ['gpumem.snapshot', 'gpumem.page-snapshot'] },
      400: ERROR,
      401: { description: 'no token and no page header, or a wrong token (TOKEN)', body: 'error' },
      403: { description: 'the page header on a request from another site or origin (CROSS_SITE)', body: 'error' },
      405: ERROR,
      413: { description: 'an upload over 256 MiB (INPUT_TOO_LARGE), or an analysis over its memory bound (ANALYSIS_TOO_LARGE)', body: 'error' },
      422: { description: 'a file the snapshot reader cannot take (SNAPSHOT_UNREADABLE); one line goes to the server log', body: 'error' },
      503: { description: 'the server already holds as many uploads or analyses as it takes at once (BUSY, with Retry-After: 5), or the analysis went over its time budget of 60 s (ANALYSIS_TIMEOUT)', headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'seconds, with BUSY' } }, body: 'error' },
    },
  },
  {
    method: 'GET', path: '/api/v1/page/compare',
    summary: 'Two runs side by side, formatted for the page: peaks, durations, OOMs, PyTorch peaks, cleanup verdicts',
    parameters: [{ name: 'a', in: 'query', required: true, schema: { type: 'integer' } }, { name: 'b', in: 'query', required: true, schema: { type: 'integer' } }],
    responses: {
      200: { description: '{ schemaVersion, kind: gpumem.page-compare, a, b, rows: [[label, A, B]] }', body: 'gpumem.page-compare' },
      400: ERROR,
      404: ERROR,
      422: UNREADABLE,
    },
  },
  {
    method: 'GET', path: '/api/v1/page/runs',
    summary: "The Runs page's list, formatted for the page: the newest 50 runs and the newest 20 pipelines with each stage's run",
    responses: {
      200: { description: 'page runs', body: 'gpumem.page-runs' },
    },
  },
  {
    method: 'GET', path: '/api/v1/page/runs/{id}/split',
    summary: "The PyTorch split of a run at each GPU's peak; perSample is true when the run's samples also carry the split over time",
    parameters: [ID],
    responses: {
      200: { description: '{ schemaVersion, kind: gpumem.page-split, runId, perSample, splits }', body: 'gpumem.page-split' },
      404: ERROR,
      422: UNREADABLE,
    },
  },
  {
    method: 'GET', path: '/api/v1/page/runs/{id}/steps',
    summary: 'Step timing of a run per attempt and process that took steps, with the figures in words',
    parameters: [ID],
    responses: {
      200: { description: '{ schemaVersion, kind: gpumem.page-steps, runId, steps }', body: 'gpumem.page-steps' },
      404: ERROR,
      422: UNREADABLE,
    },
  },
];
