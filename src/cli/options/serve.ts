/** Options of `gpumem serve` (format: cli/spec.ts). */
import { defineCommand } from '../spec.js';
import { DB_TABLE, MAX_MS, SOURCE_TABLE, type HistoryOptions, type SourceOptions } from './shared.js';

export interface ServeOptions extends SourceOptions, HistoryOptions {
  host: string;
  port: number;
  interval: number;
  idleInterval: number;
  readonly: boolean;
  token: string | undefined;
  expose: boolean;
  actions: boolean;
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  readTokenFile: string | undefined;
  hostLabel: 'hostname' | 'Hostname';
  metricsMaxProcesses: number;
  procRoot: string | undefined;
}

export const SERVE = defineCommand<ServeOptions>({
  name: 'serve',
  summary: 'web page, JSON API and Prometheus /metrics (dcgm-exporter names) for this machine',
  usage: 'serve [options]',
  description:
    'Samples the GPUs continuously (memory bounded by a ring buffer) and serves a page with live GPUs, processes, charts and findings, the run history with timelines, a JSON API under /api/v1/ with the documents of the CLI\'s --json, server-sent events, and /metrics in the Prometheus or OpenMetrics format with dcgm-exporter\'s metric names plus gpumem_ ones. Listens on 127.0.0.1 only unless --host says otherwise. Ending a process from the page needs the token printed at start and goes through the checks of gpumem kill. See docs/serve.md.',
  options: {
    host: { type: 'string', value: 'ADDR', default: '127.0.0.1', description: 'address to listen on (anything but loopback exposes process command lines to the network)' },
    port: { type: 'number', value: 'N', integer: true, min: 0, max: 65535, default: 9488, description: 'port to listen on (0: any free port)' },
    interval: { type: 'number', value: 'MS', integer: true, min: 50, max: MAX_MS, default: 2000, description: 'time between GPU samples, in milliseconds (the page updates at this pace; Prometheus scrapes the newest)' },
    idleInterval: { type: 'number', value: 'MS', integer: true, min: 50, max: MAX_MS, default: 10_000, description: 'time between GPU samples while no page is open (never shorter than --interval; a recording plays at --interval); /metrics and the API serve the newest sample' },
    readonly: { type: 'boolean', description: 'no actions: the page and API cannot end processes' },
    token: { type: 'string', value: 'TEXT', description: 'the action token (default: a random one, printed at start); prefer GPUMEM_SERVE_TOKEN: every local user can read a command line, so this option prints a warning' },
    expose: { type: 'boolean', description: 'allow a --host that is not loopback; then HTTPS (--tls-cert/--tls-key) or a read token (--read-token-file or GPUMEM_SERVE_READ_TOKEN) is required, and actions are off unless --actions' },
    actions: { type: 'boolean', description: 'with --expose: let the page and API end processes over the network (with the action token)' },
    tlsCert: { type: 'string', value: 'FILE', path: true, description: 'serve HTTPS with this PEM certificate chain (with --tls-key)' },
    tlsKey: { type: 'string', value: 'FILE', path: true, description: 'the PEM private key of --tls-cert' },
    readTokenFile: { type: 'string', value: 'FILE', path: true, description: 'a file holding the token /metrics and /api/ then need as Authorization: Bearer TOKEN (GPUMEM_SERVE_READ_TOKEN sets it too)' },
    hostLabel: { type: 'string', choices: ['hostname', 'Hostname'], default: 'hostname', description: 'the host label\'s name on the DCGM_FI_* metrics: hostname, as dcgm-exporter writes it since its PR 655, or Hostname, as older dcgm-exporters do (match the one your dashboards use)' },
    metricsMaxProcesses: { type: 'number', value: 'N', integer: true, min: 1, max: 1_000_000, default: 1024, description: 'processes with per-process series on /metrics at most, the largest GPU holders first; the rest are counted in gpumem_process_series_dropped_total' },
    procRoot: { type: 'string', value: 'DIR', path: true, description: 'read processes from this /proc (a container that mounts the host\'s /proc elsewhere); default /proc' },
    ...DB_TABLE,
    ...SOURCE_TABLE,
  },
  examples: ['gpumem serve', 'gpumem serve --port 9488 --readonly', 'GPUMEM_SERVE_READ_TOKEN=… gpumem serve --host 0.0.0.0 --expose', 'gpumem serve --host 0.0.0.0 --expose --tls-cert node.crt --tls-key node.key'],
  exits: ['3 when no GPU can be read', '2 when the address is in use or cannot be bound, or is not loopback without --expose and HTTPS or a read token'],
});
