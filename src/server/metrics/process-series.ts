/**
 * The label set every per-process metric carries, built once per scrape: who (pid, user, command, container),
 * the process's place in its job (rank, local_rank) and the job itself (Slurm `hpc_job` as dcgm-exporter
 * names it, Kubernetes `namespace`/`pod`/`pod_uid`, `gpumem_run`), and the GPU. The same names on every
 * gpumem_ per-process metric, so they join with each other on all labels and with dcgm-exporter's device
 * metrics on `UUID`.
 *
 * Cardinality is bounded: only the processes of the newest sample have series (one that is gone drops out at
 * the next scrape), and at most `maxProcesses` of them, the largest holders first; the rest are counted.
 */
import type { GpuProcess, Sample } from '../../core/types.js';
import type { ServerSnapshot } from '../snapshot.js';

/** Label names of a per-process series, in exposition order. */
export const PROCESS_LABELS = [
  'pid', 'user', 'command', 'container', 'rank', 'local_rank', 'hpc_job', 'namespace', 'pod', 'pod_uid', 'gpumem_run', 'gpu', 'UUID',
] as const;

/** The default bound on processes with series: 8 GPUs × 128 processes. */
export const DEFAULT_MAX_PROCESSES = 1024;

export interface ProcessSeries {
  /** The GPU rows of the kept processes with their labels. */
  rows: Array<{ process: GpuProcess; labels: Record<string, string> }>;
  /** Labels of a kept (or companion-only) process for a GPU: `labelsFor(pid, uuid)`; null when the pid was left out. */
  labelsFor(pid: number, gpuUuid: string): Record<string, string> | null;
  /** Process rows of this sample left out by the cap. */
  droppedRows: number;
  /** Keys (pid and start) of the processes left out, to count each one once while it stays out. */
  droppedKeys: Set<string>;
}

/** The program's base name: what `ps -o comm` would roughly show, from argv[0] or the driver's name. */
export function commandName(p: GpuProcess): string {
  const first = p.host?.cmdline?.[0] ?? p.name ?? '';
  return first.slice(first.lastIndexOf('/') + 1);
}

const RANK = /^\d{1,7}$/;
const rankOf = (value: string | undefined): string => (value !== undefined && RANK.test(value) ? value : '');
/** A string fact from a recording is trusted only when it is a string. */
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The labels of a process apart from the GPU. */
function processLabels(p: GpuProcess | undefined, pid: number): Record<string, string> {
  const h = p?.host;
  const job = h?.job;
  return {
    pid: String(pid),
    user: text(h?.user),
    command: p ? commandName(p) : '',
    container: text(h?.containerId),
    rank: rankOf(h?.cudaEnv?.RANK),
    local_rank: rankOf(h?.cudaEnv?.LOCAL_RANK),
    hpc_job: text(job?.slurmJobId),
    namespace: text(job?.podNamespace),
    pod: text(job?.podName),
    pod_uid: text(job?.podUid),
    gpumem_run: text(job?.runMark),
  };
}

function gpuIndexByUuid(sample: Sample): Map<string, number> {
  return new Map(sample.devices.filter((d) => d.uuid !== null).map((d) => [d.uuid as string, d.index]));
}

/** The per-process label sets of one scrape, with at most `maxProcesses` processes kept. */
export function buildProcessSeries(snapshot: ServerSnapshot, maxProcesses: number): ProcessSeries {
  const { sample } = snapshot;
  const index = gpuIndexByUuid(sample);
  // The largest holders are kept: they are what a memory dashboard is for. A pid's rows stay together.
  const heldByPid = new Map<number, number>();
  for (const p of sample.processes) heldByPid.set(p.pid, (heldByPid.get(p.pid) ?? 0) + (p.usedBytes ?? 0));
  const kept = new Set([...heldByPid.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, maxProcesses).map(([pid]) => pid));
  const base = new Map<number, Record<string, string>>();
  const rows: ProcessSeries['rows'] = [];
  const droppedKeys = new Set<string>();
  let droppedRows = 0;
  for (const p of sample.processes) {
    if (!kept.has(p.pid)) {
      droppedRows++;
      droppedKeys.add(`${p.pid}:${p.host?.startTicks ?? ''}`);
      continue;
    }
    let labels = base.get(p.pid);
    if (!labels) {
      labels = processLabels(p, p.pid);
      base.set(p.pid, labels);
    }
    const gpu = p.gpuIndex ?? (p.gpuUuid === null ? undefined : index.get(p.gpuUuid));
    rows.push({ process: p, labels: { ...labels, gpu: gpu === undefined ? '' : String(gpu), UUID: p.gpuUuid ?? '' } });
  }
  return {
    rows, droppedRows, droppedKeys,
    labelsFor: (pid, gpuUuid) => {
      if (heldByPid.has(pid) && !kept.has(pid)) return null;
      let labels = base.get(pid);
      if (!labels) {
        // A supervised process the companion knows but the driver does not list (yet): no host facts here.
        labels = processLabels(undefined, pid);
        base.set(pid, labels);
      }
      const gpu = index.get(gpuUuid);
      return { ...labels, gpu: gpu === undefined ? '' : String(gpu), UUID: gpuUuid };
    },
  };
}
