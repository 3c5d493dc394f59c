/**
 * How diagnose (the analysis behind `gpumem` and `gpumem diagnose`) scales with the number of GPU processes:
 * the same synthetic window (7 samples, the synthetic two-H100 recording's first process repeated with distinct pids and a
 * mix of orphans and parent chains) at 2,500 and at 20,000 processes. The peer is the small size measured in
 * the same run: a ratio of time per process near 1 means linear; the old pid lookups made it about 5.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { diagnose, type Sample } from '../src/core/index.js';
import { median, timeEach } from './timing.js';

// Two GPUs, and every line after the header a whole sample (version 1).
const SYNTHETIC = fileURLToPath(new URL('../test/fixtures/recordings/synthetic-two-h100.ndjson', import.meta.url));
const SAMPLES = 7;

function window(processCount: number): Sample[] {
  const base = JSON.parse(readFileSync(SYNTHETIC, 'utf8').split('\n')[1] as string) as Sample;
  const template = base.processes[0]!;
  const processes = Array.from({ length: processCount }, (_, i) => {
    const p = structuredClone(template);
    p.pid = 100_000 + i;
    p.usedBytes = 1024 * 1024;
    p.gpuIndex = i % 2;
    p.gpuUuid = base.devices[i % 2]!.uuid;
    if (p.host) p.host = { ...p.host, ppid: i % 3 === 0 ? 1 : 100_000 + Math.floor(i / 2), nspid: [p.pid] };
    return p;
  });
  return Array.from({ length: SAMPLES }, (_, k) => ({ ...base, timeMs: base.timeMs + k * 500, processes }));
}

export async function run(): Promise<void> {
  const perProcessUs: Record<number, number> = {};
  for (const n of [2_500, 20_000]) {
    const samples = window(n);
    const ms = median(await timeEach(5, async () => diagnose({ samples, viewer: null, pidNamespace: 'host', ancestors: {} }), 1));
    perProcessUs[n] = (ms * 1000) / n;
    process.stdout.write(`diagnose, ${n} processes × ${SAMPLES} samples: ${ms.toFixed(0)} ms (${perProcessUs[n]!.toFixed(1)} µs per process)\n`);
  }
  const ratio = perProcessUs[20_000]! / perProcessUs[2_500]!;
  process.stdout.write(`time per process, 20,000 vs 2,500 processes: ${ratio.toFixed(2)}× (1.00 = linear; 8.00 = quadratic)\n`);
}
