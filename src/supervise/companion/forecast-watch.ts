/**
 * The OOM forecast while `gpumem run` watches: on each monitor tick, every process's per-step memory history is
 * measured against what it can still get (its PyTorch reserved bytes plus the GPU's free bytes, capped by a
 * memory fraction), warnings are printed once each, and the latest forecasts go into the run report.
 */
import { forecastMemory, forecastWarnings, forecastWhere, forecastLine, whatGrows, type MemoryForecast } from '../../core/forecast/index.js';
import type { CompanionProcessState, CompanionState } from '../../core/companion/state.js';
import { summariseSteps } from '../../core/companion/steps.js';
import type { Sample } from '../../core/types.js';

export interface ForecastSettings {
  /** Warn when growth reaches the limit within this many steps; 0 = never. */
  withinSteps: number;
  /** Warn when the next periodic spike will not fit. */
  checkSpikes: boolean;
}

export const DEFAULT_FORECAST: ForecastSettings = { withinSteps: 1000, checkSpikes: true };

/** What PyTorch in process `p` can reach on `device`: its reserved bytes plus the GPU's free ones, or null. */
export function forecastLimit(p: CompanionProcessState, device: number, sample: Sample | null): number | null {
  const d = p.devices.get(device);
  const reserved = d?.latest.reservedBytes ?? null;
  const free = d?.gpuUuid ? sample?.devices.find((g) => g.uuid === d.gpuUuid)?.memory.freeBytes ?? null : null;
  let limit = reserved !== null && free !== null ? reserved + free : null;
  const fraction = p.hello?.config.memoryFraction ?? null;
  const total = p.identities.find((i) => i.device === device)?.totalBytes ?? null;
  if (fraction !== null && total !== null) limit = Math.min(limit ?? Infinity, Math.floor(fraction * total));
  return limit;
}

interface Kept { pid: number; forecast: MemoryForecast; gpuIndex: number | null; meanStepMs: number | null; sites: unknown }

export class ForecastWatch {
  private readonly kept = new Map<string, Kept>();
  private readonly warned = new Set<string>();

  constructor(private readonly settings: ForecastSettings = DEFAULT_FORECAST) {}

  /** Recomputes the forecasts whose history moved on; returns the warnings not printed before. */
  update(state: CompanionState, sample: Sample | null, indexOf: (uuid: string) => number | null): string[] {
    const lines: string[] = [];
    for (const p of state.values()) {
      const meanStepMs = p.steps ? summariseSteps(p.steps).meanStepMs : null;
      for (const h of p.memory.values()) {
        const key = `${p.pid}/${h.device}`;
        const before = this.kept.get(key);
        const limit = forecastLimit(p, h.device, sample);
        const sites = p.sites.get(h.device) ?? null;
        if (before && before.forecast.step === h.lastStep && before.forecast.limitBytes === limit && before.sites === sites) continue;
        const forecast = forecastMemory(h, {
          // 0 turns the window off: no count of steps left is ever at or below -1.
          limitBytes: limit, withinSteps: this.settings.withinSteps > 0 ? this.settings.withinSteps : -1, checkSpikes: this.settings.checkSpikes,
        });
        if (!forecast) continue;
        if (forecast.growth && sites) {
          forecast.growth.sites = { fromStep: sites.fromStep, toStep: sites.toStep, leftGrewBytes: sites.leftGrewBytes, sites: sites.sites };
        }
        const uuid = p.devices.get(h.device)?.gpuUuid ?? null;
        const kept = { pid: p.pid, forecast, gpuIndex: uuid === null ? null : indexOf(uuid), meanStepMs, sites };
        this.kept.set(key, kept);
        if (forecast.growth?.sites && !this.warned.has(`${key}/sites`)) {
          // Once: the sites come from a snapshot at a power-of-two step, usually after the first warning.
          this.warned.add(`${key}/sites`);
          lines.push(`forecast: ${forecastWhere(p.pid, forecast, kept.gpuIndex)}${whatGrows(forecast).replace(/^;/, ':')}`);
        }
        for (const kind of forecast.warnings) {
          if (this.warned.has(`${key}/${kind}`)) continue;
          this.warned.add(`${key}/${kind}`);
          const only = { ...forecast, warnings: [kind] };
          lines.push(...forecastWarnings(forecastWhere(p.pid, forecast, kept.gpuIndex), only, meanStepMs));
        }
      }
    }
    return lines;
  }

  /** The live view: one line per process and device whose forecast sees growth or periodic spikes. */
  lines(): string[] {
    return [...this.kept.values()].map((k) => forecastLine(forecastWhere(k.pid, k.forecast, k.gpuIndex), k.forecast, k.meanStepMs)).filter((l): l is string => l !== null);
  }

  /** The latest forecast of each device of `pid`. */
  forecastsOf(pid: number): MemoryForecast[] {
    return [...this.kept.values()].filter((k) => k.pid === pid).map((k) => k.forecast);
  }
}
