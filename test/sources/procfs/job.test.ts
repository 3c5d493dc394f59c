/** The job of a process from its cgroup and environment text: Slurm, Kubernetes and `gpumem run` layouts. */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseJobFacts, parseRunMark, readHostFacts } from '../../../src/sources/procfs/index.js';

const env = (vars: Record<string, string>): string => `${Object.entries(vars).map(([k, v]) => `${k}=${v}`).join('\0')}\0`;
const POD = '6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab';
const CID = 'a'.repeat(64);

describe('parseJobFacts', () => {
  it('reads a Slurm job from the cgroup v1 and v2 paths slurmstepd makes, before SLURM_JOB_ID', () => {
    const v1 = '12:pids:/slurm/uid_1000/job_4242/step_0/task_1\n1:name=systemd:/user.slice\n';
    expect(parseJobFacts(v1, env({ SLURM_JOB_ID: '7' }))).toEqual({ slurmJobId: '4242', podUid: null, podName: null, podNamespace: null, runMark: null });
    expect(parseJobFacts('0::/system.slice/slurmstepd.scope/job_77/step_batch/user/task_0\n', null)?.slurmJobId).toBe('77');
    expect(parseJobFacts('4:memory:/slurm_node07/uid_0/job_9/step_extern\n', null)?.slurmJobId).toBe('9');
  });

  it('falls back to SLURM_JOB_ID, and only when it is a job number', () => {
    expect(parseJobFacts('0::/user.slice\n', env({ SLURM_JOB_ID: '1234' }))?.slurmJobId).toBe('1234');
    expect(parseJobFacts('0::/user.slice\n', env({ SLURM_JOB_ID: '12"} evil' }))).toBeNull();
    expect(parseJobFacts('0::/jobs/job_12/x\n', null)).toBeNull();
  });

  it('reads a pod from the kubelet\'s cgroupfs and systemd layouts; names from POD_NAME/POD_NAMESPACE, else HOSTNAME', () => {
    const cgroupfs = `11:memory:/kubepods/besteffort/pod${POD}/${CID}\n`;
    expect(parseJobFacts(cgroupfs, env({ HOSTNAME: 'trainer-0', POD_NAMESPACE: 'ml' }))).toEqual({
      slurmJobId: null, podUid: POD, podName: 'trainer-0', podNamespace: 'ml', runMark: null,
    });
    const systemd = `0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${POD.replaceAll('-', '_')}.slice/cri-containerd-${CID}.scope\n`;
    expect(parseJobFacts(systemd, env({ POD_NAME: 'job-a-worker-1', HOSTNAME: 'custom' }))).toMatchObject({ podUid: POD, podName: 'job-a-worker-1', podNamespace: null });
    expect(parseJobFacts(`0::/kubepods/pod${POD}/${CID}\n`, null)).toMatchObject({ podUid: POD, podName: null });
  });

  it('never reads a host shell\'s HOSTNAME as a pod, and drops names Kubernetes would refuse', () => {
    expect(parseJobFacts('0::/user.slice/user-1000.slice\n', env({ HOSTNAME: 'gpu-node-1', POD_NAMESPACE: 'ml' }))).toBeNull();
    expect(parseJobFacts(`0::/kubepods/pod${POD}/${CID}\n`, env({ POD_NAME: 'Bad_Name', HOSTNAME: 'x'.repeat(300), POD_NAMESPACE: 'a.b' }))).toMatchObject({ podName: null, podNamespace: null });
  });

  it('reads the gpumem run mark and what it names', () => {
    const facts = parseJobFacts(null, env({ GPUMEM_RUN_MARK: '4711-1767225600000-0a1b2c3d' }));
    expect(facts?.runMark).toBe('4711-1767225600000-0a1b2c3d');
    expect(parseRunMark(facts!.runMark!)).toEqual({ supervisorPid: 4711, startedAtMs: 1767225600000 });
    expect(parseJobFacts(null, env({ GPUMEM_RUN_MARK: 'x' }))).toBeNull();
  });

  it('a real process\'s environment reaches its host facts', async () => {
    const child = spawn('/bin/sleep', ['30'], { stdio: 'ignore', env: { SLURM_JOB_ID: '31337', GPUMEM_RUN_MARK: '1-2-ab' } });
    try {
      let job = null;
      for (let i = 0; i < 200 && job === null; i++) {
        job = readHostFacts(child.pid!).job ?? null;
        if (job === null) await new Promise((r) => setTimeout(r, 10));
      }
      expect(job).toMatchObject({ slurmJobId: '31337', runMark: '1-2-ab' });
    } finally {
      child.kill('SIGKILL');
    }
  });
});
