/**
 * /metrics: renders a snapshot in the Prometheus text format or, when the scraper asks for it, in
 * OpenMetrics, through prom-client's registry. The metric objects are built once per format (prom-client
 * renames counters for OpenMetrics in place, so the two formats cannot share them) and refilled per scrape.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { ServerSnapshot } from '../snapshot.js';
import { DCGM_METRICS } from './dcgm.js';
import type { MetricDef } from './define.js';
import { GPUMEM_METRICS } from './gpumem.js';

interface Filled {
  def: MetricDef;
  metric: Gauge | Counter;
}

interface FormatSet {
  registry: Registry;
  metrics: Filled[];
  duration: Gauge;
}

const DURATION_NAME = 'gpumem_scrape_duration_seconds';

/** prom-client's constructor takes the content type; its type declarations leave the parameter out. */
const RegistryOf = Registry as unknown as new (contentType: string) => Registry;

function buildSet(contentType: string): FormatSet {
  const registry = new RegistryOf(contentType);
  const metrics = [...DCGM_METRICS, ...GPUMEM_METRICS].map((def): Filled => {
    const config = { name: def.name, help: def.help, labelNames: [...def.labels], registers: [registry] };
    return { def, metric: def.type === 'counter' ? new Counter(config) : new Gauge(config) };
  });
  const duration = new Gauge({ name: DURATION_NAME, help: 'Time gpumem took to build the previous /metrics response, in seconds.', registers: [registry] });
  return { registry, metrics, duration };
}

/** Whether an Accept header asks for OpenMetrics (Prometheus sends it first when it prefers it). */
export function wantsOpenMetrics(accept: string | undefined): boolean {
  return accept !== undefined && /application\/openmetrics-text/i.test(accept);
}

export class MetricsExporter {
  private readonly sets = new Map<string, FormatSet>();
  private previousSeconds: number | null = null;

  /** The body and content type for one scrape of `snapshot`. */
  async render(snapshot: ServerSnapshot, openMetrics: boolean): Promise<{ body: string; contentType: string }> {
    const started = performance.now();
    const type = openMetrics ? Registry.OPENMETRICS_CONTENT_TYPE : Registry.PROMETHEUS_CONTENT_TYPE;
    let set = this.sets.get(type);
    if (!set) {
      set = buildSet(type);
      this.sets.set(type, set);
    }
    for (const { def, metric } of set.metrics) {
      metric.reset();
      for (const [labels, value] of def.rows(snapshot)) {
        if (metric instanceof Counter) metric.inc(labels, value);
        else metric.set(labels, value);
      }
    }
    set.duration.reset();
    if (this.previousSeconds !== null) set.duration.set(this.previousSeconds);
    const body = await set.registry.metrics();
    this.previousSeconds = (performance.now() - started) / 1000;
    return { body, contentType: set.registry.contentType };
  }
}
