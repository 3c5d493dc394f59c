/**
 * POST /api/v1/processes/PID/kill: ends one GPU process through exactly the checks of `gpumem kill PID`
 * (never pid 1, gpumem or its ancestors, another user's process, a pid not visible here, one whose start
 * time is unknown or that holds no NVIDIA device; re-checked right before the signal). Needs the token;
 * refused with --readonly and on a recording.
 */
import type { ServerResponse } from 'node:http';
import { printable } from '../../core/text.js';
import type { GpuSource } from '../../sources/index.js';
import { executeKill, gpuProofReason, protectedPids, selectTargets, type KillOptions } from '../../supervise/index.js';
import { sendError, sendJson } from '../http/respond.js';
import type { KillDoc } from '../page-docs.js';
import type { ServerState } from '../state.js';
import { killAnswerDocument } from '../../core/documents/kill.js';

/** Linux's largest possible pid (PID_MAX_LIMIT). */
const PID_MAX_LIMIT = 4_194_304;

/** The pid in a kill path, or why it is not one (a number no process can have is a bad request, not a 404). */
export function parsePid(text: string): number | string {
  const pid = /^\d{1,10}$/.test(text) ? Number(text) : NaN;
  return pid <= PID_MAX_LIMIT ? pid : `not a process id: ${printable(text.slice(0, 40))} (pids are whole numbers up to ${PID_MAX_LIMIT})`;
}

export interface KillSettings {
  graceMs: number;
  killOptions: KillOptions;
}

/** Ends `pid` when every check passes; answers with the rows and outcomes `gpumem kill --json` prints. */
export async function killProcess(res: ServerResponse, pid: number, state: ServerState, settings: KillSettings): Promise<void> {
  const sample = await state.sampler.sampleNow();
  if (!sample) {
    sendError(res, 503, 'NO_SAMPLE', 'GPU state could not be read');
    return;
  }
  if (sample.source.kind === 'replay') {
    sendError(res, 409, 'RECORDING', 'a recording cannot be acted on');
    return;
  }
  const rows = selectTargets(sample, { pids: [pid], gpus: [], orphans: false, zombieHolders: false, user: null, idle: false, olderThanMs: null }, {
    uid: process.getuid?.() ?? -1, protectedPids: protectedPids(process.pid), allUsers: false, nowMs: Date.now(),
    gpuProof: (p) => gpuProofReason(p, settings.killOptions),
  });
  if (rows.length === 0) {
    sendError(res, 404, 'NOT_A_GPU_PROCESS', `pid ${pid} is not on any GPU`);
    return;
  }
  // executeKill re-reads GPU state right before signalling; the sampler's reading is that fresh state.
  const fresh: GpuSource = {
    kind: sample.source.kind,
    readSample: async () => (await state.sampler.sampleNow()) ?? sample,
    close: () => undefined,
  };
  const outcomes = await executeKill(rows, fresh, settings.graceMs, settings.killOptions);
  const ended = outcomes.some((o) => o.pid === pid && (o.outcome === 'exited' || o.outcome === 'terminated' || o.outcome === 'killed'));
  sendJson(res, ended ? 200 : 409, killAnswerDocument(rows, outcomes) satisfies KillDoc);
}
