/** The live charts: one series per GPU, the newest POINTS samples of memory used (GiB) and utilisation (%). */
import type UPlot from 'uplot';
import type { LiveRow } from '../page-docs.js';
import { byId, GiB } from './dom.js';
import { memoryRange, noteCapacity } from './memory-axis.js';

const POINTS = 300;

/** uPlot's own script defines it; it runs after this one (both deferred), so it may not be there yet. */
export const chartLibrary = (): typeof UPlot | undefined => (globalThis as { uPlot?: typeof UPlot }).uPlot;

type Kind = 'memory' | 'util';
const KINDS: readonly Kind[] = ['memory', 'util'];

const series: { times: number[]; memory: Map<number, Array<number | null>>; util: Map<number, Array<number | null>> } = { times: [], memory: new Map(), util: new Map() };
const charts: { memory: UPlot | null; util: UPlot | null; gpuCount: number } = { memory: null, util: null, gpuCount: -1 };

function chartData(kind: Kind): UPlot.AlignedData {
  const keys = [...series[kind].keys()].sort((a, b) => a - b);
  return [series.times, ...keys.map((k) => series[kind].get(k) as Array<number | null>)];
}

function makeChart(lib: typeof UPlot, kind: Kind, target: HTMLElement, keys: readonly number[]): UPlot {
  const width = Math.max(320, target.clientWidth || 480);
  const opts: UPlot.Options = {
    width, height: 200,
    series: [{}, ...keys.map((k, i) => ({ label: `GPU ${k}`, stroke: `hsl(${(i * 67) % 360} 70% 45%)`, width: 1.5 }))],
    scales: kind === 'util' ? { y: { range: [0, 100] } } : { y: { range: (_u, _min, max) => memoryRange(max) } },
    axes: [{}, {}],
  };
  target.replaceChildren();
  return new lib(opts, chartData(kind), target);
}

/** The time (seconds) of the newest point, if any. */
export function newestTime(): number | undefined {
  return series.times[series.times.length - 1];
}

/** Adds one sample's numbers; a GPU that appears late gets gaps before it, one that is gone gets a gap. */
export function addLive(live: LiveRow): void {
  series.times.push(live.timeMs / 1000);
  const seen = new Set<number>();
  for (const d of live.devices) {
    seen.add(d.index);
    for (const kind of KINDS) {
      if (!series[kind].has(d.index)) series[kind].set(d.index, series.times.slice(0, -1).map(() => null));
    }
    series.memory.get(d.index)?.push(d.usedBytes === null ? null : d.usedBytes / GiB);
    noteCapacity(d.totalBytes);
    series.util.get(d.index)?.push(d.gpuPct);
  }
  for (const kind of KINDS) {
    for (const [k, values] of series[kind]) if (!seen.has(k)) values.push(null);
  }
  if (series.times.length > POINTS) {
    series.times.shift();
    for (const kind of KINDS) for (const values of series[kind].values()) values.shift();
  }
}

/** Forgets every point (a stream's first message brings the whole history). */
export function resetSeries(): void {
  series.times = [];
  series.memory.clear();
  series.util.clear();
}

/** Draws the charts, making them again when the number of GPUs changed. */
export function drawCharts(): void {
  const lib = chartLibrary();
  if (lib === undefined) return;
  const count = series.memory.size;
  if (count !== charts.gpuCount) {
    const keys = [...series.memory.keys()].sort((a, b) => a - b);
    charts.memory = makeChart(lib, 'memory', byId('chart-memory'), keys);
    charts.util = makeChart(lib, 'util', byId('chart-util'), keys);
    charts.gpuCount = count;
    return;
  }
  charts.memory?.setData(chartData('memory'));
  charts.util?.setData(chartData('util'));
}
