/**
 * The companion's statistics stream, per sample, in Python against the fake torch: the full path
 * (memory_stats → message → JSON → non-blocking socket write) against a bare memory_stats() call. The
 * real-GPU measurement (step-time overhead at 10 Hz on torch 2.11) is bench/gpu/companion-overhead.py.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CompanionServer } from '../src/supervise/companion/index.js';

const root = (p: string): string => fileURLToPath(new URL(`../${p}`, import.meta.url));

export async function run(): Promise<void> {
  const server = await CompanionServer.start();
  const child = spawn('python3', [root('bench/python/companion_overhead_fake.py'), server.socketPath, '20000'], {
    env: { ...process.env, PYTHONPATH: [root('test/python/fake_torch_versions/v2_11'), root('python')].join(':') },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  await server.close();
  if (code !== 0) throw new Error(`companion overhead script failed: ${err}`);
  const r = JSON.parse(out) as { samples: number; sampleUs: number; memoryStatsUs: number; dropped: number };
  const received = [...server.state.values()].reduce((n, p) => n + (p.devices.size > 0 ? 1 : 0), 0);
  process.stdout.write(
    `companion sample (stats → JSON → socket): ${r.sampleUs.toFixed(1)} µs/sample over ${r.samples} samples\n` +
      `peer: bare torch.cuda.memory_stats():      ${r.memoryStatsUs.toFixed(1)} µs/call\n` +
      `ratio companion/peer: ${(r.sampleUs / r.memoryStatsUs).toFixed(2)}×; at 10 Hz that is ` +
      `${((r.sampleUs * 10) / 1e4).toFixed(4)} % of one core; dropped ${r.dropped}; processes seen ${received}\n`,
  );
}
