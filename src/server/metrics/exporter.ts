/**
 * /metrics: renders a snapshot in the Prometheus text format or, when the scraper asks for it, in
 * OpenMetrics, through prom-client's registry, which writes the exposition (headers, escaping, counter
 * suffixes, `# EOF`). Our metrics are registered as collectors that hand the registry the snapshot's rows
 * directly: prom-client's Gauge/Counter would hash and validate every label set on each scrape, which for
 * 8 GPUs × 64 processes costs more than the whole response may. One set of collectors per format, because
 * prom-client renames counters for OpenMetrics in place.
 */
import { Registry } from 'prom-client';
import type { ServerSnapshot } from '../snapshot.js';
import { DCGM_METRICS } from './dcgm.js';
import type { HostLabel, MetricDef, MetricsContext } from './define.js';
import { GPUMEM_METRICS } from './gpumem.js';
import { JOB_METRICS } from './jobs.js';
import { buildProcessSeries, DEFAULT_MAX_PROCESSES } from './process-series.js';
import { STEP_METRICS } from './steps.js';
import { FORECAST_METRICS } from './forecast.js';

/** prom-client's constructor takes the content type; its type declarations leave the parameter out. */
const RegistryOf = Registry as unknown as new (contentType: string) => Registry;

interface Collected {
  name: string;
  help: string;
  type: string;
  values: Array<{ sharedLabels: Record<string, string>; value: number }>;
}

/**
 * Label sets kept from one scrape to the next. prom-client formats and escapes `sharedLabels` once per object
 * (a WeakMap keyed by the object), so handing it the same object for the same label values makes the
 * escaping and string building of a steady process or GPU a cache hit. Only the previous scrape's sets are
 * kept, so the table never holds more than one scrape's rows.
 */
class LabelSets {
  private previous = new Map<string, Record<string, string>>();
  private current = new Map<string, Record<string, string>>();

  intern(labels: Record<string, string>): Record<string, string> {
    let key = '';
    for (const name in labels) key += `${name}\u0000${labels[name]}\u0000`;
    const known = this.current.get(key) ?? this.previous.get(key) ?? labels;
    this.current.set(key, known);
    return known;
  }

  /** Ends a scrape: sets not used in it are dropped at the end of the next. */
  rotate(): void {
    this.previous = this.current;
    this.current = new Map();
  }
}

/** What prom-client's registry needs of a metric: a name, help, type and its current values. */
class SnapshotCollector {
  name: string;
  readonly help: string;
  readonly type: string;
  current: { snapshot: ServerSnapshot; context: MetricsContext } | null = null;

  private readonly labelSets = new LabelSets();

  constructor(private readonly def: MetricDef, openMetrics: boolean) {
    this.name = def.name;
    this.help = def.help;
    this.type = openMetrics ? (def.openMetricsType ?? def.type) : def.type;
  }

  get(): Collected {
    const rows = this.current ? this.def.rows(this.current.snapshot, this.current.context) : [];
    return { name: this.name, help: this.help, type: this.type, values: rows.map(([labels, value]) => ({ sharedLabels: this.labelSets.intern(labels), value })) };
  }

  reset(): void {
    this.current = null;
    this.labelSets.rotate();
  }
}

const DURATION: MetricDef = {
  name: 'gpumem_scrape_duration_seconds', type: 'gauge', labels: [],
  help: 'Time gpumem took to build the previous /metrics response, in seconds.',
  rows: () => [],
};

interface FormatSet {
  registry: Registry;
  collectors: SnapshotCollector[];
}

function buildSet(contentType: string, duration: () => number | null): FormatSet {
  const registry = new RegistryOf(contentType);
  const openMetrics = contentType === Registry.OPENMETRICS_CONTENT_TYPE;
  const durationDef: MetricDef = { ...DURATION, rows: () => { const s = duration(); return s === null ? [] : [[{}, s]]; } };
  const collectors = [...DCGM_METRICS, ...GPUMEM_METRICS, ...JOB_METRICS, ...STEP_METRICS, ...FORECAST_METRICS, durationDef].map((def) => new SnapshotCollector(def, openMetrics));
  for (const c of collectors) registry.registerMetric(c as never);
  return { registry, collectors };
}

/** Whether an Accept header asks for OpenMetrics (Prometheus sends it first when it prefers it). */
export function wantsOpenMetrics(accept: string | undefined): boolean {
  return accept !== undefined && /application\/openmetrics-text/i.test(accept);
}

export interface ExporterOptions {
  /** The host label's name on dcgm-exporter metrics (default `hostname`, as dcgm-exporter writes it since its PR 655). */
  hostLabel?: HostLabel;
  /** Processes with per-process series at most (default 1024); the rest are counted, not exported. */
  maxProcesses?: number;
}

export class MetricsExporter {
  private readonly sets = new Map<string, FormatSet>();
  private previousSeconds: number | null = null;
  private readonly hostLabel: HostLabel;
  private readonly maxProcesses: number;
  /** Processes left out by the cap at the previous scrape, and the count of every one left out so far. */
  private droppedBefore = new Set<string>();
  private droppedTotal = 0;

  constructor(options: ExporterOptions = {}) {
    this.hostLabel = options.hostLabel ?? 'hostname';
    this.maxProcesses = options.maxProcesses ?? DEFAULT_MAX_PROCESSES;
  }

  /** The body and content type for one scrape of `snapshot`. */
  async render(snapshot: ServerSnapshot, openMetrics: boolean): Promise<{ body: string; contentType: string }> {
    const started = performance.now();
    const type = openMetrics ? Registry.OPENMETRICS_CONTENT_TYPE : Registry.PROMETHEUS_CONTENT_TYPE;
    let set = this.sets.get(type);
    if (!set) {
      set = buildSet(type, () => this.previousSeconds);
      this.sets.set(type, set);
    }
    const processes = buildProcessSeries(snapshot, this.maxProcesses);
    for (const key of processes.droppedKeys) if (!this.droppedBefore.has(key)) this.droppedTotal++;
    this.droppedBefore = processes.droppedKeys;
    const context: MetricsContext = { hostLabel: this.hostLabel, processes, droppedTotal: this.droppedTotal };
    for (const c of set.collectors) c.current = { snapshot, context };
    const body = await set.registry.metrics();
    for (const c of set.collectors) c.reset();
    this.previousSeconds = (performance.now() - started) / 1000;
    return { body, contentType: set.registry.contentType };
  }
}
