/** server/: HTTP app, dashboard assets, JSON API, /metrics. Imports core/, sources/, store/, supervise/, orchestrate/. */
export { createApp, listen, type App, type AppOptions, type TlsFiles } from './app.js';
export { ServerState, type ServerStateOptions } from './state.js';
export { MetricsExporter, wantsOpenMetrics, type ExporterOptions } from './metrics/exporter.js';
export type { HostLabel } from './metrics/define.js';
export { isLoopbackAddress, newToken } from './http/guard.js';
export { CONTENT_SECURITY_POLICY } from './http/respond.js';
export type { ServerSnapshot, RunSummary } from './snapshot.js';
