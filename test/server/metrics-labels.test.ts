/** /metrics keeps label sets between scrapes: a changed label value must show at once, an unchanged one stay. */
import { describe, expect, it } from 'vitest';
import { MetricsExporter } from '../../src/server/index.js';
import type { ServerSnapshot } from '../../src/server/snapshot.js';

function snapshotWith(user: string, usedBytes: number): ServerSnapshot {
  const process = { pid: 42, gpuIndex: 0, gpuUuid: 'GPU-x', usedBytes, name: 'python', host: { user, cmdline: ['/usr/bin/python', 'train.py'], containerId: null } };
  return { sample: { timeMs: 1, devices: [], processes: [process] }, hostname: 'h', companion: [], findings: [], runs: null, jobEnded: new Set() } as unknown as ServerSnapshot;
}

const line = (body: string): string | undefined => body.split('\n').find((l) => l.startsWith('gpumem_process_gpu_memory_bytes{'));

describe('label sets kept between scrapes', () => {
  it('shows a changed label value and the new number on the next scrape', async () => {
    const exporter = new MetricsExporter();
    expect(line((await exporter.render(snapshotWith('alice', 100), false)).body)).toBe('gpumem_process_gpu_memory_bytes{pid="42",user="alice",command="python",container="",rank="",local_rank="",hpc_job="",namespace="",pod="",pod_uid="",gpumem_run="",gpu="0",UUID="GPU-x"} 100');
    expect(line((await exporter.render(snapshotWith('alice', 200), false)).body)).toBe('gpumem_process_gpu_memory_bytes{pid="42",user="alice",command="python",container="",rank="",local_rank="",hpc_job="",namespace="",pod="",pod_uid="",gpumem_run="",gpu="0",UUID="GPU-x"} 200');
    expect(line((await exporter.render(snapshotWith('b"o\\b\n', 300), false)).body)).toBe('gpumem_process_gpu_memory_bytes{pid="42",user="b\\"o\\\\b\\n",command="python",container="",rank="",local_rank="",hpc_job="",namespace="",pod="",pod_uid="",gpumem_run="",gpu="0",UUID="GPU-x"} 300');
    expect(line((await exporter.render(snapshotWith('alice', 400), true)).body)).toBe('gpumem_process_gpu_memory_bytes{pid="42",user="alice",command="python",container="",rank="",local_rank="",hpc_job="",namespace="",pod="",pod_uid="",gpumem_run="",gpu="0",UUID="GPU-x"} 400');
  });
});
