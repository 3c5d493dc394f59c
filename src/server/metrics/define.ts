/** How a metric is declared: its exposition facts and how to compute its samples from a snapshot. */
import type { ServerSnapshot } from '../snapshot.js';
import type { ProcessSeries } from './process-series.js';

/** One sample: label values and the number. */
export type Row = [labels: Record<string, string>, value: number];

/**
 * The name of the host label on dcgm-exporter's metrics: `hostname` since its PR 655 (May 2026, "Rename
 * Hostname label to hostname"), `Hostname` before. One of the two, never both: Grafana would show each series
 * twice.
 */
export type HostLabel = 'hostname' | 'Hostname';

/** What one scrape's metrics share: the host label's spelling and the per-process label sets, built once. */
export interface MetricsContext {
  hostLabel: HostLabel;
  processes: ProcessSeries;
  /** Process rows left out by the cap so far (gpumem_process_series_dropped_total). */
  droppedTotal: number;
}

export interface MetricDef {
  name: string;
  type: 'gauge' | 'counter';
  help: string;
  /**
   * The type in OpenMetrics output when it must differ: OpenMetrics names a counter's sample `<name>_total`,
   * so a dcgm-exporter counter without that suffix goes out as a gauge there to keep the series name
   * dashboards query.
   */
  openMetricsType?: 'gauge';
  labels: readonly string[];
  rows: (snapshot: ServerSnapshot, context: MetricsContext) => Row[];
}
