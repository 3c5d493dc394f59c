/**
 * What each command reads from NVML, and how often: a real driver's calls are far from free (CPU per call on an
 * H100: total energy 3.84 ms, per-process SM % 2.53 ms, power limit 0.18 ms, MIG mode 0.15 ms, the rest
 * ≤ 0.021 ms), so a command pays only for the fields it shows or exports. docs/nvml.md has the table.
 */
import type { NvmlFields } from '../sources/index.js';

/** Settings (power limit, compute mode, MIG mode) change only by an administrator: live commands re-read them this often. */
export const LIVE_SETTINGS_EVERY_MS = 10_000;

/**
 * `gpumem status` as a table: memory, utilisation, temperature, power and processes; no clocks, energy or
 * per-process SM %, which the table does not draw. With --json the document carries every field, every sample.
 */
export function statusFields(json: boolean, watch: boolean): NvmlFields | undefined {
  if (json) return undefined;
  return { clocks: false, energy: false, processSmEveryMs: null, ...(watch ? { settingsEveryMs: LIVE_SETTINGS_EVERY_MS } : {}) };
}

/**
 * `gpumem doctor` / `diagnose`: per-process SM % is evidence (idle, input-bound, orphan activity), read once a
 * second — the timestamp protocol gives each read every driver sample since the previous one, so the window
 * loses none; settings once per window; no clocks or energy.
 */
export const DIAGNOSIS_FIELDS: NvmlFields = { clocks: false, energy: false, settingsEveryMs: 60_000, processSmEveryMs: 1000 };

/** `gpumem watch`: SM % at nvitop's default refresh (2 s) whatever the interval; no clocks or energy (not drawn). */
export const WATCH_FIELDS: NvmlFields = { clocks: false, energy: false, settingsEveryMs: LIVE_SETTINGS_EVERY_MS, processSmEveryMs: 2000 };

/**
 * `gpumem serve`: clocks for /metrics (they cost microseconds); energy only when /metrics is scraped
 * (GpuSource.readTotalEnergyMj), not every sample; SM % for the page every 5 s.
 */
export const SERVE_FIELDS: NvmlFields = { clocks: true, energy: false, settingsEveryMs: LIVE_SETTINGS_EVERY_MS, processSmEveryMs: 5000 };

/** `gpumem record`: what a replay shows (recordings carry no clocks or energy); SM % every 5 s. */
export const RECORD_FIELDS: NvmlFields = { clocks: false, energy: false, settingsEveryMs: LIVE_SETTINGS_EVERY_MS, processSmEveryMs: 5000 };
