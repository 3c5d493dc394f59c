/**
 * A fleet of two nodes, each a real `gpumem serve` on its own fake driver scenario, scraped by a real
 * Prometheus that evaluates the shipped recording and alerting rules (docs/prometheus/). Node A holds a Slurm
 * job's ranks 0 and 1 (one known by its SLURM_JOB_ID, one only by its cgroup path), a leftover of a `gpumem
 * run` that is over and a small process its cap leaves out; node B (HTTPS, read token, old host label) holds
 * rank 2 of the same job on a nearly full GPU and a Kubernetes pod's rank on an idle GPU. PromQL answers per
 * job, per rank and per node are asserted, the alerts go pending, and every query of dcgm-exporter's
 * dashboard (Grafana 12239) and of gpumem's fleet dashboard is run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { makeCertificate } from '../helpers/tls-cert.js';
import { writeHistory } from './history-fixture.js';
import { mirrorProc, publishCompanion, startServe, type ServeNode } from './fleet-helpers.js';
import { startPrometheus, type Prometheus, type VectorResult } from './prometheus-helpers.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const RULES = fileURLToRepo('docs/prometheus/gpumem-rules.yml');
const ALERTS = fileURLToRepo('docs/prometheus/gpumem-alerts.yml');
const READ_TOKEN = 'fleet-read-token-0123456789';
const POD_UID = '6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab';
const CONTAINER = 'c'.repeat(64);

function fileURLToRepo(path: string): string {
  return new URL(`../../${path}`, import.meta.url).pathname;
}

const dir = mkdtempSync(join(tmpdir(), 'gpumem-fleet-'));
const children: ChildProcess[] = [];
const nodes: ServeNode[] = [];
let prom: Prometheus;
const pids: Record<string, number> = {};
let runMark = '';

/** A stand-in GPU process: `sleep` with the given environment. */
function gpuProcess(name: string, env: Record<string, string> = {}): number {
  const child = spawn('/bin/sleep', ['120'], { stdio: 'ignore', env: { PATH: '/usr/bin:/bin', ...env } });
  children.push(child);
  pids[name] = child.pid!;
  return child.pid!;
}

const byLabel = (rows: VectorResult[], label: string): Record<string, number> => Object.fromEntries(rows.map((r) => [r.metric[label] ?? '', Number(r.value[1])]));

beforeAll(async () => {
  // A supervisor that has exited: its run's leftover still holds memory.
  const gone = spawnSync('/bin/true');
  runMark = `${gone.pid}-${Date.now() - 60_000}-0a1b2c3d`;
  const rank0 = gpuProcess('rank0', { SLURM_JOB_ID: '4242', RANK: '0', LOCAL_RANK: '0' });
  const rank1 = gpuProcess('rank1', { RANK: '1', LOCAL_RANK: '1' });
  const leftover = gpuProcess('leftover', { GPUMEM_RUN_MARK: runMark });
  const small = gpuProcess('small');
  const rank2 = gpuProcess('rank2', { SLURM_JOB_ID: '4242', RANK: '2', LOCAL_RANK: '0' });
  const podRank = gpuProcess('podRank', { HOSTNAME: 'trainer-0', POD_NAMESPACE: 'ml', RANK: '0', LOCAL_RANK: '0' });

  const procA = join(dir, 'proc-a');
  mirrorProc(procA, [process.pid, rank0, rank1, leftover, small], new Map([[rank1, '12:pids:/slurm/uid_0/job_4242/step_0/task_1\n0::/\n']]));
  const procB = join(dir, 'proc-b');
  const podCgroup = `0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${POD_UID.replaceAll('-', '_')}.slice/cri-containerd-${CONTAINER}.scope\n`;
  mirrorProc(procB, [rank2, podRank], new Map([[podRank, podCgroup]]));

  const total = 81559 * MiB;
  const reserved = 479 * MiB;
  const scenarioA = join(dir, 'node-a.txt');
  writeScenario(scenarioA, {
    driverVersion: '590.48.01', cudaVersion: 13010, devices: [
      fakeH100(0, { memory: { totalBytes: total, reservedBytes: reserved, usedBytes: 20_000 * MiB }, utilization: { gpuPct: 90, memoryPct: 40 }, processes: [{ pid: rank0, usedBytes: 20_000 * MiB, smUtilPct: 90 }] }),
      fakeH100(1, {
        memory: { totalBytes: total, reservedBytes: reserved, usedBytes: 32_500 * MiB }, utilization: { gpuPct: 80, memoryPct: 30 },
        processes: [{ pid: rank1, usedBytes: 30_000 * MiB, smUtilPct: 80 }, { pid: leftover, usedBytes: 2000 * MiB, smUtilPct: 0 }, { pid: small, usedBytes: 500 * MiB, smUtilPct: 0 }],
      }),
    ],
  });
  const scenarioB = join(dir, 'node-b.txt');
  writeScenario(scenarioB, {
    driverVersion: '590.48.01', cudaVersion: 13010, devices: [
      fakeH100(2, { minorNumber: 0, memory: { totalBytes: total, reservedBytes: reserved, usedBytes: 78_000 * MiB }, utilization: { gpuPct: 95, memoryPct: 60 }, processes: [{ pid: rank2, usedBytes: 78_000 * MiB, smUtilPct: 95 }] }),
      fakeH100(3, { minorNumber: 1, memory: { totalBytes: total, reservedBytes: reserved, usedBytes: 4096 * MiB }, utilization: { gpuPct: 0, memoryPct: 0 }, processes: [{ pid: podRank, usedBytes: 4096 * MiB, smUtilPct: 0 }] }),
    ],
  });
  const runtimeA = mkdtempSync(join(dir, 'run-a-'));
  publishCompanion(runtimeA, rank0, fakeH100(0).uuid!, { allocatedBytes: 11 * GiB, reservedBytes: 14 * GiB, numOoms: 1 });
  const cert = makeCertificate(dir);
  const tokenFile = join(dir, 'read-token');
  writeFileSync(tokenFile, READ_TOKEN, { mode: 0o600 });

  const base = { PATH: '/usr/bin:/bin', XDG_DATA_HOME: dir };
  const fast = ['--interval', '200', '--idle-interval', '200', '--readonly'];
  nodes.push(...await Promise.all([
    startServe([...fast, '--proc-root', procA, '--metrics-max-processes', '3', '--db', writeHistory(mkdtempSync(join(dir, 'history-'))).path], { ...base, NODE_NAME: 'node-a', XDG_RUNTIME_DIR: runtimeA, ...fakeNvmlEnv('590', scenarioA) }),
    startServe([...fast, '--proc-root', procB, '--host', '0.0.0.0', '--expose', '--tls-cert', cert.certPath, '--tls-key', cert.keyPath, '--read-token-file', tokenFile, '--host-label', 'Hostname'],
      { ...base, NODE_NAME: 'node-b', XDG_RUNTIME_DIR: mkdtempSync(join(dir, 'run-b-')), ...fakeNvmlEnv('590', scenarioB) }),
  ]));
  const [a, b] = nodes as [ServeNode, ServeNode];
  prom = await startPrometheus([
    { name: 'gpumem', targets: [`127.0.0.1:${a.port}`] },
    {
      name: 'gpumem-tls', targets: [`127.0.0.1:${b.port}`],
      extra: ['    scheme: https', '    tls_config:', `      ca_file: ${cert.certPath}`, '    authorization:', `      credentials_file: ${tokenFile}`],
    },
  ], { intervalMs: 500, ruleFiles: [RULES, ALERTS] });
  await prom.until('both nodes scraped, rules evaluated over both', async () => {
    const up = await prom.query('up');
    // The five processes in a job (rank 0–2, the leftover, the pod's rank) and free memory of both nodes.
    const inJob = await prom.query('process:gpumem_gpu_memory_bytes:in_job');
    const free = await prom.query('instance:gpumem_gpu_free_bytes:sum');
    return up.length === 2 && up.every((r) => r.value[1] === '1') && inJob.length === 5 && free.length === 2 ? true : undefined;
  }, 25_000);
}, 60_000);

afterAll(async () => {
  await prom?.stop();
  await Promise.all(nodes.map((n) => n.stop()));
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const instanceOf = (i: number): string => `127.0.0.1:${nodes[i]!.port}`;

describe('a fleet of gpumem serve nodes in one Prometheus', () => {
  it('answers per job across nodes and per rank, from the process\'s SLURM_JOB_ID or its cgroup path', async () => {
    const job = await prom.query('sum by (hpc_job) (gpumem_process_gpu_memory_bytes{hpc_job!=""})');
    expect(byLabel(job, 'hpc_job')).toEqual({ 4242: 128_000 * MiB });
    const ranks = await prom.query('gpumem_process_gpu_memory_bytes{hpc_job="4242"}');
    expect(Object.fromEntries(ranks.map((r) => [r.metric.rank, [r.metric.instance, r.metric.gpu, Number(r.value[1])]]))).toEqual({
      0: [instanceOf(0), '0', 20_000 * MiB], 1: [instanceOf(0), '1', 30_000 * MiB], 2: [instanceOf(1), '0', 78_000 * MiB],
    });
    expect(ranks.find((r) => r.metric.rank === '1')!.metric.pid).toBe(String(pids.rank1));
    expect(byLabel(await prom.query('gpumem_job:process_gpu_memory_bytes:sum{hpc_job="4242"}'), 'hpc_job')).toEqual({ 4242: 128_000 * MiB });
    expect(byLabel(await prom.query('gpumem_job:process_gpu_memory_bytes:max{hpc_job="4242"}'), 'hpc_job')).toEqual({ 4242: 78_000 * MiB });
    expect(byLabel(await prom.query('gpumem_job:process_gpu_memory_bytes:max_over_time_1h{hpc_job="4242"}'), 'hpc_job')).toEqual({ 4242: 78_000 * MiB });
  });

  it('names a Kubernetes pod from its cgroup path and environment, and a gpumem run from its mark', async () => {
    const pod = await prom.query('gpumem_process_gpu_memory_bytes{pod!=""}');
    expect(pod.map((r) => r.metric)).toEqual([expect.objectContaining({
      namespace: 'ml', pod: 'trainer-0', pod_uid: POD_UID, container: CONTAINER, rank: '0', local_rank: '0', pid: String(pids.podRank), instance: instanceOf(1),
    })]);
    expect(byLabel(await prom.query('gpumem_job:process_gpu_memory_bytes:sum{pod!=""}'), 'pod')).toEqual({ 'trainer-0': 4096 * MiB });
    expect(byLabel(await prom.query('gpumem_process_gpu_memory_bytes{gpumem_run!=""}'), 'gpumem_run')).toEqual({ [runMark]: 2000 * MiB });
  });

  it('answers free memory per node and the PyTorch split per rank', async () => {
    const free = await prom.query('instance:gpumem_gpu_free_bytes:sum');
    expect(byLabel(free, 'instance')).toEqual({ [instanceOf(0)]: (61_080 + 48_580) * MiB, [instanceOf(1)]: (3080 + 76_984) * MiB });
    expect(byLabel(await prom.query('instance:gpumem_gpu_free_bytes:max'), 'instance')).toEqual({ [instanceOf(0)]: 61_080 * MiB, [instanceOf(1)]: 76_984 * MiB });
    const split = await prom.query('sum by (part) (gpumem_process_memory_split_bytes{hpc_job="4242", rank="0"})');
    expect(byLabel(split, 'part')).toEqual({ pytorch_allocated: 11 * GiB, pytorch_cached: 3 * GiB, non_pytorch: 20_000 * MiB - 14 * GiB });
    expect(byLabel(await prom.query('gpumem_job:pytorch_peak_reserved_bytes:max'), 'hpc_job')).toEqual({ 4242: 14 * GiB });
  });

  it('keeps the host label spelling each node was told, never both on one series', async () => {
    expect(byLabel(await prom.query('DCGM_FI_DEV_FB_USED{gpu="0"}'), 'instance')).toEqual({ [instanceOf(0)]: 20_000, [instanceOf(1)]: 78_000 });
    expect((await prom.query('DCGM_FI_DEV_FB_USED{hostname="node-a"}')).map((r) => r.metric.Hostname)).toEqual([undefined, undefined]);
    expect((await prom.query('DCGM_FI_DEV_FB_USED{Hostname="node-b"}')).map((r) => r.metric.hostname)).toEqual([undefined, undefined]);
    // Process rows join device labels on UUID.
    const joined = await prom.query('sum by (hostname) (gpumem_process_gpu_memory_bytes{hpc_job="4242"} * on (UUID) group_left (hostname) (0 * DCGM_FI_DEV_FB_USED + 1))');
    expect(byLabel(joined, 'hostname')).toEqual({ 'node-a': 50_000 * MiB, '': 78_000 * MiB });
  });

  it('bounds per-process series: the smallest process past the cap is left out and counted', async () => {
    expect(await prom.query(`gpumem_process_gpu_memory_bytes{pid="${pids.small}"}`)).toEqual([]);
    expect(byLabel(await prom.query('gpumem_process_series_dropped_total'), 'instance')).toEqual({ [instanceOf(0)]: 1, [instanceOf(1)]: 0 });
  });

  it('puts the shipped alerts in pending: leftover after its run, a rank near full memory, an idle GPU under a pod', async () => {
    const alerts = await prom.until('the three alerts', async () => {
      const rows = await prom.query('ALERTS{alertstate="pending"}');
      return rows.length >= 3 ? rows : undefined;
    });
    const by = Object.fromEntries(alerts.map((r) => [r.metric.alertname, r.metric]));
    expect(Object.keys(by).sort()).toEqual(['GpumemGpuHeldAfterJobEnded', 'GpumemGpuIdleUnderRunningJob', 'GpumemRankNearGpuMemory']);
    expect(by.GpumemGpuHeldAfterJobEnded).toMatchObject({ pid: String(pids.leftover), gpumem_run: runMark, instance: instanceOf(0) });
    expect(by.GpumemRankNearGpuMemory).toMatchObject({ rank: '2', hpc_job: '4242', instance: instanceOf(1) });
    expect(by.GpumemGpuIdleUnderRunningJob).toMatchObject({ pod: 'trainer-0', namespace: 'ml', gpu: '1' });
  });

  it('fills every query of dcgm-exporter\'s dashboard (Grafana 12239) but tensor-core activity, which NVML lacks', async () => {
    const dashboard = JSON.parse(readFileSync(fileURLToRepo('test/fixtures/dcgm-exporter/dcgm-exporter-dashboard.json'), 'utf8')) as {
      gnetId: number; panels: Array<{ targets?: Array<{ expr: string }> }>; templating: { list: Array<{ query: unknown }> };
    };
    expect(dashboard.gnetId).toBe(12239);
    const empty: string[] = [];
    for (const target of dashboard.panels.flatMap((p) => p.targets ?? [])) {
      const rows = await prom.query(target.expr.replaceAll('$instance', '.*').replaceAll('$gpu', '.*'));
      if (rows.length === 0) empty.push(target.expr);
    }
    expect(empty).toEqual(['DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{instance=~"$instance", gpu=~"$gpu"}']);
    for (const variable of dashboard.templating.list) {
      const m = typeof variable.query === 'string' ? /^label_values\((\w+), (\w+)\)$/.exec(variable.query) : null;
      if (!m) continue;
      const values = (await (await fetch(`${prom.base}/api/v1/label/${m[2]}/values?match[]=${m[1]}`)).json()) as { data: string[] };
      expect(values.data.length, variable.query as string).toBeGreaterThan(0);
    }
  });

  it('fills every panel of the fleet dashboard, whose metric names all exist', async () => {
    const dashboard = JSON.parse(readFileSync(fileURLToRepo('docs/grafana/gpumem-fleet-dashboard.json'), 'utf8')) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>; templating: { list: Array<{ name: string; type: string; query: string }> };
    };
    const names = new Set(((await (await fetch(`${prom.base}/api/v1/label/__name__/values`)).json()) as { data: string[] }).data);
    const fill = (expr: string): string => expr.replaceAll('$instance', '.*').replaceAll('$hpc_job', '.*').replaceAll('$pod', '.*');
    const exprs = [...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)), ...dashboard.templating.list.filter((v) => v.type === 'query').map((v) => v.query)];
    let checked = 0;
    for (const expr of exprs) {
      // Label lists (by, on, group_left …) and matchers name labels, not metrics.
      const bare = expr.replace(/\b(?:by|on|without|ignoring|group_left|group_right)\s*\([^)]*\)/g, '').replace(/\{[^}]*\}/g, '');
      for (const name of bare.match(/\b(?:\w+:\w+:\w+|DCGM_FI_\w+|gpumem_\w+)\b/g) ?? []) {
        expect(names.has(name), `${name} in ${expr}`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(dashboard.panels.length);
    // Every query has data (a rate over a few scrapes of unchanged counters is 0 or NaN, not absent).
    // A rate or increase needs two scrapes in its window: on a loaded machine the second may still be coming.
    for (const panel of dashboard.panels) {
      for (const target of panel.targets) {
        let rows = await prom.query(fill(target.expr));
        for (let i = 0; i < 40 && rows.length === 0; i++) {
          await new Promise((r) => setTimeout(r, 250));
          rows = await prom.query(fill(target.expr));
        }
        expect(rows.length, `${panel.title}: ${target.expr}`).toBeGreaterThan(0);
      }
    }
  });
});
