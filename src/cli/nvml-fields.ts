/**
 * What each command reads from NVML, and how often: a real driver's calls are far from free (CPU per call on an
 * H100: total energy 3.84 ms, per-process SM % 2.53 ms, power limit 0.18 ms, MIG mode 0.15 ms, the rest
 * ≤ 0.021 ms), so a command pays only for the fields it shows or exports. docs/nvml.md has the table.
 *
 * Per-process SM % is the one expensive field a live view shows. The driver's timestamp protocol hands each read
 * every sample taken since the previous one, so a slow period loses no sample, it only coarsens the mean: GPUs
 * whose rows nobody sees are read on SM_UNSHOWN_EVERY_MS (the findings of a window still get every sample), the
 * ones on screen at the view's own period.
 */
import type { NvmlFields } from '../sources/index.js';

/**
 * Settings (power limit, compute mode, MIG mode) change only by an administrator: live commands re-read them
 * this often (0.34 ms of driver CPU per GPU each time on an H100).
 */
export const LIVE_SETTINGS_EVERY_MS = 60_000;

/**
 * Per-process SM % of GPUs no view shows: once a minute. The findings windows (watch's 65 s, serve's
 * diagnosis) then hold at least one read, whose mean covers the whole minute before it.
 */
export const SM_UNSHOWN_EVERY_MS = 60_000;

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

/**
 * What the SM % reads of the GPUs on screen may cost a live view: 0.05 % of a core, a quarter of the 0.2 % the
 * whole view may use at 1 Hz. The source times the reads, so a driver whose call costs microseconds keeps the
 * 5-s period, and eight H100s on screen (2.5 ms a read) are read every 40 s.
 */
export const SM_SHOWN_BUDGET = 0.0005;

/**
 * What the slow SM % reads of a server with no page open may cost: 0.01 % of a core, a tenth of the 0.1 % an
 * idle server may use. Only a diagnosis (the API's, or the one behind /metrics' job-ended marks) reads them;
 * eight H100s are then read every 200 s (each mean covers the whole time since the read before), one every
 * minute.
 */
export const SM_IDLE_BUDGET = 0.0001;

/**
 * `gpumem watch`: SM % of the GPUs whose rows are on screen every 5 s whatever the interval (a 5-s mean; one
 * GPU read every 2 s, nvitop's refresh, would alone cost 0.13 % of a core on an H100 against the 0.2 % the
 * whole view may use at 1 Hz), longer where SM_SHOWN_BUDGET needs it; the others once a minute for the
 * findings line; no clocks or energy (not drawn). `shown` says whether a GPU has rows on screen now.
 */
export function watchFields(shown: (gpuIndex: number) => boolean): NvmlFields {
  return { clocks: false, energy: false, settingsEveryMs: LIVE_SETTINGS_EVERY_MS, processSmEveryMs: SM_UNSHOWN_EVERY_MS, processSmShown: shown, processSmShownEveryMs: 5000, processSmBudget: SM_SHOWN_BUDGET };
}

/**
 * `gpumem serve`: clocks for /metrics (they cost microseconds); energy only when /metrics is scraped
 * (GpuSource.readTotalEnergyMj), not every sample; SM % every 5 s while a page is open (`shown` is true for every GPU
 * then, longer where SM_SHOWN_BUDGET needs it), once a minute otherwise, longer where SM_IDLE_BUDGET needs it
 * (/metrics exports no per-process SM %; the API's diagnosis uses it).
 */
export function serveFields(shown: (gpuIndex: number) => boolean): NvmlFields {
  return {
    clocks: true, energy: false, settingsEveryMs: LIVE_SETTINGS_EVERY_MS, processSmEveryMs: SM_UNSHOWN_EVERY_MS, processSmShown: shown,
    processSmShownEveryMs: 5000, processSmBudget: SM_SHOWN_BUDGET, processSmUnshownBudget: SM_IDLE_BUDGET,
  };
}

/**
 * `gpumem record`: what a replay shows (recordings carry no clocks or energy). SM % every 30 s, longer where
 * SM_SHOWN_BUDGET needs it (eight H100s: every 40 s; every 30 s they would cost 0.067 % of a core, a third of
 * the 0.2 % a recorder may use): a replay's rows show those means, and doctor on a replay gets every driver
 * sample through them.
 */
export const RECORD_FIELDS: NvmlFields = {
  clocks: false, energy: false, settingsEveryMs: LIVE_SETTINGS_EVERY_MS,
  processSmEveryMs: 30_000, processSmShown: () => true, processSmShownEveryMs: 30_000, processSmBudget: SM_SHOWN_BUDGET,
};

/**
 * `gpumem run` / `pipeline` (a sample every 100 ms by default): memory and processes for peaks and cleanup,
 * device utilisation and the run's SM % for the under-used finding — SM % every 5 s is the same mean over the
 * run (once a second on 8 GPUs would be 2 ms of driver CPU per 10-Hz sample); settings only for MIG instances
 * (slow period); no clocks or energy (the report has neither).
 */
export const SUPERVISE_FIELDS: NvmlFields = { clocks: false, energy: false, settingsEveryMs: LIVE_SETTINGS_EVERY_MS, processSmEveryMs: 5000 };
