/**
 * The HTTP server of `gpumem serve`: the page, the JSON API, server-sent events and /metrics over one
 * node:http listener. Requests never wait on sampling: every view renders from the sampler's latest sample.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventHub } from './http/events.js';
import { hasToken, hostAllowed } from './http/guard.js';
import { sendError, send } from './http/respond.js';
import { MetricsExporter, wantsOpenMetrics } from './metrics/exporter.js';
import { killProcess, type KillSettings } from './routes/actions.js';
import { LiveStream } from './live-stream.js';
import { handleApiRead } from './routes/api.js';
import { handleRunPages } from './routes/run-pages.js';
import { DEFAULT_MAX_UPLOAD_BYTES, handleRunSnapshots, handleSnapshotUpload } from './routes/snapshots.js';
import { loadAssets, serveAsset } from './routes/assets.js';
import type { ServerState } from './state.js';
import type { ServerSnapshot } from './snapshot.js';

export interface AppOptions {
  state: ServerState;
  /** The address the server listens on (decides the Host check). */
  bindAddress: string;
  /** Token for actions; null turns actions off (--readonly). */
  token: string | null;
  kill: KillSettings;
  /** Largest snapshot upload accepted (default 256 MiB). */
  maxUploadBytes?: number;
  /** Called with errors that are not the client's (logged by the CLI). */
  onError?: (error: unknown) => void;
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
  /** Stops the sampler subscription and ends event streams. */
  close(): void;
}

/** Builds the request handler and hooks it to the sampler (one event message per new sample). */
export function createApp(options: AppOptions): App {
  const { state } = options;
  const assets = loadAssets();
  const exporter = new MetricsExporter();
  const { pace } = options;
  const events = new EventHub(32, pace && ((open) => {
    const intervalMs = open > 0 ? pace.intervalMs : pace.idleIntervalMs;
    // A page that opens gets its next sample now, not after the idle wait.
    if (state.sampler.currentIntervalMs !== intervalMs) state.sampler.setIntervalMs(intervalMs, { restart: open > 0 });
  }));
  if (pace) state.sampler.setIntervalMs(pace.idleIntervalMs);
  const facts = { readonly: options.token === null };
  const stream = new LiveStream(state, events, facts);
  const unsubscribe = state.sampler.subscribe((sample) => stream.broadcast(sample));

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!hostAllowed(req, options.bindAddress)) {
      sendError(res, 421, 'HOST_NOT_ALLOWED', 'this server answers only to localhost names');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    const kill = /^\/api\/v1\/processes\/(\d{1,9})\/kill$/.exec(url.pathname);
    if (kill) {
      if (method !== 'POST') return sendError(res, 405, 'METHOD', 'use POST');
      if (options.token === null) return sendError(res, 403, 'READONLY', 'this server was started with --readonly');
      if (!hasToken(req, options.token)) return sendError(res, 401, 'TOKEN', 'actions need the token gpumem serve printed: Authorization: Bearer TOKEN');
      return killProcess(res, Number(kill[1]), state, options.kill);
    }
    if (url.pathname === '/api/v1/snapshots') {
      if (method !== 'POST') return sendError(res, 405, 'METHOD', 'POST the snapshot file as the request body');
      return handleSnapshotUpload(req, res, url, options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES, (e) => options.onError?.(e));
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
      if (!events.add(res, stream.first())) {
        sendError(res, 503, 'TOO_MANY_CLIENTS', 'too many open pages');
      }
      return;
    }
    if (url.pathname.startsWith('/api/')) {
      if (!handleRunSnapshots(res, url, state) && !handleRunPages(res, url, state) && !handleApiRead(req, res, url, state, facts)) sendError(res, 404, 'NOT_FOUND', 'no such API path');
      return;
    }
    if (!serveAsset(res, url.pathname, assets)) sendError(res, 404, 'NOT_FOUND', 'no such page');
  };

  return {
    events,
    handle: (req, res) => {
      route(req, res).catch((error: unknown) => {
        options.onError?.(error);
        if (!res.headersSent) sendError(res, 500, 'INTERNAL', 'internal error (see the server log)');
        else res.end();
      });
    },
    close: () => {
      unsubscribe();
      events.closeAll();
    },
  };
}

/** Listens on `host:port` (port 0: any free one) and resolves with the server and its real port. */
export function listen(app: App, host: string, port: number): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => app.handle(req, res));
  // A page left open must not keep a dead connection's socket forever.
  server.keepAliveTimeout = 5000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve({ server, port: (server.address() as AddressInfo).port });
    });
  });
}

/** The snapshot with each device's total energy as read at this scrape (devices are copied, never changed). */
function withEnergy(snapshot: ServerSnapshot, energy: Map<number, number | null>): ServerSnapshot {
  const devices = snapshot.sample.devices.map((d) => (energy.has(d.index) ? { ...d, totalEnergyMj: energy.get(d.index) ?? null } : d));
  return { ...snapshot, sample: { ...snapshot.sample, devices } };
}
