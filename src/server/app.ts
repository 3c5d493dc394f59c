/**
 * The HTTP server of `gpumem serve`: the page, the JSON API, server-sent events and /metrics over one
 * node:http listener. Requests never wait on sampling: every view renders from the sampler's latest sample.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { EventHub } from './http/events.js';
import { hasToken, hostAllowed } from './http/guard.js';
import { sendError, send } from './http/respond.js';
import { WorkGate, type WorkLimits } from './http/work-gate.js';
import { DEFAULT_ANALYSIS_LIMITS, type AnalysisLimits } from './analysis/run-analysis.js';
import { MetricsExporter, wantsOpenMetrics, type ExporterOptions } from './metrics/exporter.js';
import { killProcess, parsePid, type KillSettings } from './routes/actions.js';
import { LiveStream } from './live-stream.js';
import { handleApiRead } from './routes/api.js';
import { handleRunPages } from './routes/run-pages.js';
import { DEFAULT_MAX_UPLOAD_BYTES, handleRunSnapshots, handleSnapshotUpload, type SnapshotContext } from './routes/snapshots.js';
import { loadAssets, serveAsset } from './routes/assets.js';
import type { ServerState } from './state.js';
import { isGpumemError } from '../core/errors.js';
import type { ServerSnapshot } from './snapshot.js';

export interface AppOptions {
  state: ServerState;
  /**
   * The address the server listens on, as given; `listen()` replaces it with the address actually bound
   * (server.address()), which decides the Host check.
   */
  bindAddress: string;
  /** Token for actions; null turns actions off (--readonly). */
  token: string | null;
  /**
   * Token every read of /metrics and /api/ needs as `Authorization: Bearer …` (the action token is taken too);
   * null: reads are open, as on loopback. The page's files stay open: they carry no data.
   */
  readToken?: string | null;
  /** The host label's spelling and the per-process series cap of /metrics. */
  metrics?: ExporterOptions;
  kill: KillSettings;
  /** Largest snapshot upload accepted (default 256 MiB). */
  maxUploadBytes?: number;
  /**
   * Snapshot work at once: uploads and analyses running, and upload bytes held (default 2 jobs and the
   * bytes of one largest upload), so parallel uploads cannot grow memory without bound.
   */
  work?: Partial<WorkLimits>;
  /** Time budget and heap bound of one snapshot analysis (default 60 s, 1024 MiB). */
  analysis?: Partial<AnalysisLimits>;
  /** Called with errors that are not the client's (logged by the CLI). */
  onError?: (error: unknown) => void;
  /** Called with one line about a request that failed because of its input (a damaged file or record). */
  onWarning?: (line: string) => void;
  /**
   * Sampling pace: `intervalMs` while a page is open, `idleIntervalMs` while none is (/metrics and the API
   * read the newest sample either way). Without it the sampler keeps its own interval.
   */
  pace?: { intervalMs: number; idleIntervalMs: number };
  /** Total energy per device index read now, for /metrics, when the samples do not carry it. */
  energyAtScrape?: () => Map<number, number | null>;
}

export interface App {
  handle(req: IncomingMessage, res: ServerResponse): void;
  events: EventHub;
  /** Tells the app the address its listener bound (the Host check follows it). */
  setBoundAddress(address: string): void;
  /** The bounds on snapshot work (for tests and the log). */
  work: WorkGate;
  /** Stops the sampler subscription, ends event streams and running snapshot analyses. */
  close(): void;
}

/** Builds the request handler and hooks it to the sampler (one event message per new sample). */
export function createApp(options: AppOptions): App {
  const { state } = options;
  let bindAddress = options.bindAddress;
  const assets = loadAssets();
  const exporter = new MetricsExporter(options.metrics);
  const readToken = options.readToken ?? null;
  const { pace } = options;
  const events = new EventHub({
    maxClients: 32,
    onSizeChange: pace && ((open) => {
      const intervalMs = open > 0 ? pace.intervalMs : pace.idleIntervalMs;
      // A page that opens gets its next sample now, not after the idle wait.
      if (state.sampler.currentIntervalMs !== intervalMs) state.sampler.setIntervalMs(intervalMs, { restart: open > 0 });
    }),
  });
  if (pace) state.sampler.setIntervalMs(pace.idleIntervalMs);
  const facts = { readonly: options.token === null };
  const maxUploadBytes = options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;
  const work = new WorkGate({ maxJobs: options.work?.maxJobs ?? 2, maxBytes: options.work?.maxBytes ?? maxUploadBytes });
  const stopping = new AbortController();
  const snapshots: SnapshotContext = {
    token: options.token, maxUploadBytes, gate: work,
    limits: { ...DEFAULT_ANALYSIS_LIMITS, ...options.analysis },
    stopping: stopping.signal,
    warn: (line) => options.onWarning?.(line),
    onError: (error) => options.onError?.(error),
  };
  const stream = new LiveStream(state, events, facts);
  const unsubscribe = state.sampler.subscribe((sample) => stream.broadcast(sample));

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!hostAllowed(req, bindAddress)) {
      sendError(res, 421, 'HOST_NOT_ALLOWED', 'this server answers only to localhost names');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    if (readToken !== null && (url.pathname === '/metrics' || url.pathname.startsWith('/api/'))
      && !hasToken(req, readToken) && !(options.token !== null && hasToken(req, options.token))) {
      return sendError(res, 401, 'TOKEN', 'this server needs its read token: Authorization: Bearer TOKEN (Prometheus: authorization.credentials_file)', { 'WWW-Authenticate': 'Bearer realm="gpumem"' });
    }
    const kill = /^\/api\/v1\/processes\/([^/]*)\/kill$/.exec(url.pathname);
    if (kill) {
      if (method !== 'POST') return sendError(res, 405, 'METHOD', 'use POST');
      const pid = parsePid(kill[1] as string);
      if (typeof pid === 'string') return sendError(res, 400, 'BAD_PID', pid);
      if (options.token === null) return sendError(res, 403, 'READONLY', 'this server was started with --readonly');
      if (!hasToken(req, options.token)) return sendError(res, 401, 'TOKEN', 'actions need the token gpumem serve printed: Authorization: Bearer TOKEN');
      return killProcess(res, pid, state, options.kill);
    }
    if (url.pathname === '/api/v1/snapshots') {
      if (method !== 'POST') return sendError(res, 405, 'METHOD', 'POST the snapshot file as the request body');
      return handleSnapshotUpload(req, res, url, snapshots);
    }
    if (method !== 'GET' && method !== 'HEAD') return sendError(res, 405, 'METHOD', 'only GET here');
    if (url.pathname === '/metrics') {
      const snapshot = state.snapshot();
      if (!snapshot) return sendError(res, 503, 'NO_SAMPLE_YET', 'the first GPU sample is not in yet');
      const energy = options.energyAtScrape?.();
      const { body, contentType } = await exporter.render(energy ? withEnergy(snapshot, energy) : snapshot, wantsOpenMetrics(req.headers.accept));
      return send(res, 200, contentType, body, { 'Cache-Control': 'no-store' });
    }
    if (url.pathname === '/api/v1/events') {
      events.add(res, stream.first());
      return;
    }
    if (url.pathname.startsWith('/api/')) {
      try {
        if (!handleRunSnapshots(req, res, url, state, snapshots) && !handleRunPages(res, url, state) && !handleApiRead(req, res, url, state, facts)) sendError(res, 404, 'NOT_FOUND', 'no such API path');
      } catch (error) {
        const record = storedRecord(url);
        if (record === null || isGpumemError(error) || res.headersSent) throw error;
        // A history written by another version, or damaged: the record's fault, not the server's.
        const reason = error instanceof Error ? error.message : String(error);
        options.onWarning?.(`${record}: cannot be read from the history (${reason})`);
        sendError(res, 422, 'RECORD_UNREADABLE', `${record} cannot be read from the history (${reason})`);
      }
      return;
    }
    if (!serveAsset(res, url.pathname, assets)) sendError(res, 404, 'NOT_FOUND', 'no such page');
  };

  return {
    events,
    work,
    setBoundAddress: (address) => {
      bindAddress = address;
    },
    handle: (req, res) => {
      route(req, res).catch((error: unknown) => {
        options.onError?.(error);
        if (!res.headersSent) sendError(res, 500, 'INTERNAL', 'internal error (see the server log)');
        else res.end();
      });
    },
    close: () => {
      stopping.abort();
      unsubscribe();
      events.closeAll();
    },
  };
}

/** The stored record a history path reads ("run 6", "runs 3 and 4"), or null when the path reads none. */
function storedRecord(url: URL): string | null {
  const run = /^\/api\/v1\/(?:page\/)?runs\/(\d{1,12})(?:\/|$)/.exec(url.pathname);
  if (run) return `run ${run[1]}`;
  if (url.pathname === '/api/v1/page/compare') return `run ${url.searchParams.get('a')} or ${url.searchParams.get('b')}`;
  return null;
}

/** A certificate chain and its private key, PEM, for HTTPS. */
export interface TlsFiles {
  cert: Buffer;
  key: Buffer;
}

/**
 * Listens on `host:port` (port 0: any free one) and resolves with the server, its real port and the address
 * it bound (the resolver's literal: `127.1` and `localhost` come back as 127.0.0.1, `0:0:0:0:0:0:0:1` as ::1).
 * With `tls` it speaks HTTPS only (node:https, TLS 1.2 or newer).
 */
export function listen(app: App, host: string, port: number, tls?: TlsFiles): Promise<{ server: Server; port: number; address: string }> {
  const handler = (req: IncomingMessage, res: ServerResponse): void => app.handle(req, res);
  const server: Server = tls ? createTlsServer({ cert: tls.cert, key: tls.key, minVersion: 'TLSv1.2' }, handler) : createServer(handler);
  // A page left open must not keep a dead connection's socket forever.
  server.keepAliveTimeout = 5000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const bound = server.address() as AddressInfo;
      app.setBoundAddress(bound.address);
      resolve({ server, port: bound.port, address: bound.address });
    });
  });
}

/** The snapshot with each device's total energy as read at this scrape (devices are copied, never changed). */
function withEnergy(snapshot: ServerSnapshot, energy: Map<number, number | null>): ServerSnapshot {
  const devices = snapshot.sample.devices.map((d) => (energy.has(d.index) ? { ...d, totalEnergyMj: energy.get(d.index) ?? null } : d));
  return { ...snapshot, sample: { ...snapshot.sample, devices } };
}
