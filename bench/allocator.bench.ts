/**
 * Allocator simulation speed: trace events (alloc + free) per second through AllocatorSim, against the
 * straightforward reference implementation in allocator-reference.ts, on the same generated training-like
 * workload (persistent weights, then steps that allocate activations of 512 B – 64 MiB and free them in
 * reverse, with short-lived temporaries between). Both must end with the same reserved bytes. Also the
 * replay of the largest real snapshot trace (parse excluded).
 */
import { readFileSync } from 'node:fs';
import { AllocatorSim, replayTrace, settingsFromSnapshot } from '../src/core/allocator/index.js';
import { readSnapshotPickle } from '../src/core/snapshot/index.js';
import { ReferenceAllocator } from './allocator-reference.js';

/** The workload as columns: ids[i] and bytes[i] (−1 = free), so the driver itself costs next to nothing. */
interface Ops { ids: Int32Array; bytes: Float64Array; length: number }

function workload(events: number, seed = 7): Ops {
  let s = seed;
  const rand = (): number => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const size = (): number => Math.floor(2 ** (9 + rand() * 17));
  const ops: Ops = { ids: new Int32Array(events + 1000), bytes: new Float64Array(events + 1000), length: 0 };
  const push = (id: number, bytes: number): void => {
    ops.ids[ops.length] = id;
    ops.bytes[ops.length++] = bytes;
  };
  let id = 0;
  for (let i = 0; i < 200; i++) push(id++, size());
  while (ops.length < events) {
    const step: number[] = [];
    for (let l = 0; l < 300 && ops.length < events; l++) {
      const a = id++;
      push(a, size());
      step.push(a);
      if (rand() < 0.5) {
        const t = id++;
        push(t, size());
        push(t, -1);
      }
    }
    while (step.length > 0 && ops.length < events + 900) push(step.pop() as number, -1);
  }
  return ops;
}

/**
 * Seconds of CPU this process spent driving the workload (user + system): on a shared, overloaded machine
 * wall time mostly measures the queue for a core, CPU time what the work itself costs.
 */
function drive(ops: Ops, a: { alloc(id: number, bytes: number): unknown; free(id: number): void }): number {
  const t = process.cpuUsage();
  const { ids, bytes } = ops;
  for (let i = 0; i < ops.length; i++) {
    const b = bytes[i] as number;
    if (b < 0) a.free(ids[i] as number);
    else a.alloc(ids[i] as number, b);
  }
  const used = process.cpuUsage(t);
  return (used.user + used.system) / 1e6;
}

const rate = (n: number, s: number): string => `${((n / s) / 1e6).toFixed(2)} M events per CPU second`;

export async function run(): Promise<void> {
  const big = workload(4_000_000);
  drive(workload(200_000, 3), new AllocatorSim()); // warm-up
  const simSeconds = drive(big, new AllocatorSim());
  process.stdout.write(`AllocatorSim: ${big.length} events in ${simSeconds.toFixed(2)} s of CPU = ${rate(big.length, simSeconds)}\n`);

  const small = workload(200_000, 11);
  const sim = new AllocatorSim();
  const ref = new ReferenceAllocator();
  const simSmall = drive(small, sim);
  const refSmall = drive(small, ref);
  process.stdout.write(`same 200k-event workload: AllocatorSim ${rate(small.length, simSmall)}, reference (linear scans) ${rate(small.length, refSmall)}; ratio ${(refSmall / simSmall).toFixed(1)}× faster; reserved bytes agree: ${sim.reservedBytes === ref.reservedBytes}\n`);

  const file = new URL('../test/fixtures/snapshot/real/kkaitlyn_ctx128_forward_mixed.pickle', import.meta.url);
  const snap = readSnapshotPickle(new Uint8Array(readFileSync(file)));
  const trace = snap.traces[0];
  if (trace) {
    const settings = settingsFromSnapshot(snap.allocatorSettings);
    const endSegments = snap.segments.filter((x) => x.device === 0);
    const reps = 50;
    const t = process.cpuUsage();
    for (let i = 0; i < reps; i++) replayTrace(trace, { settings, endSegments });
    const used = process.cpuUsage(t);
    const s = (used.user + used.system) / 1e6;
    process.stdout.write(`replay of a real trace (kkaitlyn, ${trace.length} events, 688 segments, seeding and comparison included) ×${reps}: ${rate(trace.length * reps, s)}\n`);
  }
}
