/**
 * The job a process belongs to, from its own /proc/PID/cgroup and /proc/PID/environ: a Slurm job, a
 * Kubernetes pod, a `gpumem run`. Pure parsers over the two files' text, so every path layout is tested with
 * plain strings. The values become Prometheus labels, so each is checked against the form its owner gives it
 * and anything else is dropped: another user's environment cannot put arbitrary text into a label.
 */
import type { JobFacts } from '../../core/types.js';

/**
 * Slurm puts a job's processes in `…/slurm/uid_U/job_J/step_S/…` (cgroup v1; `slurm_NODE` when one host runs
 * several slurmd) or `…/slurmstepd.scope/job_J/step_S/…` (cgroup v2). The cgroup is placed by slurmstepd, so
 * it is preferred to the SLURM_JOB_ID a process could have been given by hand.
 */
const SLURM_CGROUP = /(?:\/slurm[^/]*\/uid_\d+|\/slurmstepd\.scope)\/job_(\d{1,20})(?:\/|$)/;

/**
 * A pod's cgroup under the kubelet: `/kubepods[/QOS]/pod<uid>/<container>` (cgroupfs driver) or
 * `/kubepods.slice/kubepods-QOS.slice/kubepods-QOS-pod<uid with _>.slice/…` (systemd driver).
 */
const POD_CGROUP = /\/kubepods[^\n]*?[/-]pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12})(?:\.slice)?(?:\/|$)/;

const SLURM_JOB_ID = /^\d{1,20}$/;
/** Kubernetes object names: a pod is a DNS subdomain, a namespace a DNS label. */
const POD_NAME = /^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$/;
const NAMESPACE = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** What `gpumem run` sets: supervisor pid, start ms, random hex (supervise/run.ts). */
const RUN_MARK = /^\d{1,10}-\d{1,16}-[0-9a-f]{1,32}$/;

const ENV_KEYS = new Set(['SLURM_JOB_ID', 'POD_NAME', 'POD_NAMESPACE', 'HOSTNAME', 'GPUMEM_RUN_MARK']);

function jobEnv(environ: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const entry of environ.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq <= 0) continue;
    const key = entry.slice(0, eq);
    if (ENV_KEYS.has(key) && !env.has(key)) env.set(key, entry.slice(eq + 1));
  }
  return env;
}

const valid = (value: string | undefined, form: RegExp): string | null => (value !== undefined && form.test(value) ? value : null);

/** The cgroup paths of a /proc/PID/cgroup text (the third field of each line). */
function cgroupPaths(text: string): string[] {
  return text.split('\n').filter((l) => l.length > 0).map((l) => l.split(':').slice(2).join(':'));
}

/**
 * The job facts of one process, or null when neither file names a job. `cgroupText` or `environText` is null
 * when it could not be read (another user's environ): the other still counts.
 *
 * - `slurmJobId`: from the cgroup path, else SLURM_JOB_ID.
 * - `podUid`: from the cgroup path; `podName`: POD_NAME (the downward-API convention), else HOSTNAME, which
 *   the kubelet sets to the pod's name unless the pod spec sets its own hostname; `podNamespace`:
 *   POD_NAMESPACE (downward API) only — no other trace of it reaches the process. Names are taken only for a
 *   process in a pod's cgroup, so a host shell's HOSTNAME is never read as a pod.
 * - `runMark`: GPUMEM_RUN_MARK, which `gpumem run` gives every process it starts.
 */
export function parseJobFacts(cgroupText: string | null, environText: string | null): JobFacts | null {
  const paths = cgroupText === null ? [] : cgroupPaths(cgroupText);
  const env = environText === null ? new Map<string, string>() : jobEnv(environText);
  let slurmJobId: string | null = null;
  let podUid: string | null = null;
  for (const path of paths) {
    slurmJobId ??= SLURM_CGROUP.exec(path)?.[1] ?? null;
    const pod = POD_CGROUP.exec(path)?.[1];
    if (pod && podUid === null) podUid = pod.replaceAll('_', '-');
  }
  slurmJobId ??= valid(env.get('SLURM_JOB_ID'), SLURM_JOB_ID);
  const podName = podUid === null ? null : (valid(env.get('POD_NAME'), POD_NAME) ?? valid(env.get('HOSTNAME'), POD_NAME));
  const podNamespace = podUid === null ? null : valid(env.get('POD_NAMESPACE'), NAMESPACE);
  const runMark = valid(env.get('GPUMEM_RUN_MARK'), RUN_MARK);
  if (slurmJobId === null && podUid === null && runMark === null) return null;
  return { slurmJobId, podUid, podName, podNamespace, runMark };
}

/** The supervisor pid and start time (ms since the epoch) a run mark names; null when it is not one. */
export function parseRunMark(mark: string): { supervisorPid: number; startedAtMs: number } | null {
  if (!RUN_MARK.test(mark)) return null;
  const [pid, ms] = mark.split('-');
  return { supervisorPid: Number(pid), startedAtMs: Number(ms) };
}
