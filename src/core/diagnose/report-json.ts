/** The JSON document of `gpumem diagnose --json`, `gpumem doctor --json` and the server's /api/v1/diagnosis (docs/diagnose.md). */
import type { DiagnoseReport } from './engine.js';

export interface Fallback {
  /** Why live GPUs could not be read. */
  reason: string;
  /** The bundled recording shown instead. */
  recording: string;
}

/** Builds the versioned JSON document; process rows carry derived facts, not the raw source rows. */
export function reportJson(report: DiagnoseReport, command: 'diagnose' | 'doctor', fallback: Fallback | null, recordingNote: string | null): unknown {
  return {
    schemaVersion: report.schemaVersion,
    command,
    timeMs: report.timeMs,
    window: report.window,
    source: report.source,
    recordingNote,
    fallback,
    devices: report.devices,
    accounting: report.accounting,
    trees: report.trees,
    users: report.users,
    processes: report.processes.map((v) => ({
      pid: v.pid,
      gpuIndex: v.gpuIndex,
      gpuUuid: v.row.gpuUuid,
      usedBytes: v.usedBytes,
      visible: v.visible,
      gone: v.gone,
      user: v.user,
      uid: v.uid,
      ppid: v.ppid,
      command: v.command,
      state: v.state,
      ageMs: v.ageMs,
      util: v.util,
      contextOnly: v.contextOnly,
      role: v.role,
      rank: v.rank ?? null,
      containerId: v.row.host?.containerId ?? null,
    })),
    findings: report.findings,
  };
}
