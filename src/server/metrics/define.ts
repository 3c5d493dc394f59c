/** How a metric is declared: its exposition facts and how to compute its samples from a snapshot. */
import type { ServerSnapshot } from '../snapshot.js';

/** One sample: label values and the number. */
export type Row = [labels: Record<string, string>, value: number];

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
  rows: (snapshot: ServerSnapshot) => Row[];
}
