/** How a metric is declared: its exposition facts and how to compute its samples from a snapshot. */
import type { ServerSnapshot } from '../snapshot.js';

/** One sample: label values and the number. */
export type Row = [labels: Record<string, string>, value: number];

export interface MetricDef {
  name: string;
  type: 'gauge' | 'counter';
  help: string;
  labels: readonly string[];
  rows: (snapshot: ServerSnapshot) => Row[];
}
