/**
 * The companion's step timing (DataLoader `__next__` wrapper) per step, in Python against the fake torch:
 * wrapped fetch against a bare fetch (the peer), and the cost as a share of 1, 10 and 100 ms steps.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = (p: string): string => fileURLToPath(new URL(`../${p}`, import.meta.url));

interface Result { fetches: number; bareFetchUs: number; wrappedFetchUs: number; messages: number; steps: Array<{ stepMs: number; n: number; bareMs: number; wrappedMs: number }> }

export async function run(): Promise<void> {
  const child = spawn('python3', [root('bench/python/steps_overhead_fake.py'), '200000'], {
    env: { ...process.env, PYTHONPATH: [root('test/python/fake_torch_versions/v2_11'), root('python')].join(':') },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  if (code !== 0) throw new Error(`step timing overhead script failed: ${err}`);
  const r = JSON.parse(out) as Result;
  const costUs = r.wrappedFetchUs - r.bareFetchUs;
  const lines = [
    `step timing wrapper: ${r.wrappedFetchUs.toFixed(2)} µs/fetch wrapped over ${r.fetches} fetches (${r.messages} messages sent)`,
    `peer: bare DataLoader fetch:  ${r.bareFetchUs.toFixed(2)} µs/fetch`,
    `ratio wrapped/peer: ${(r.wrappedFetchUs / r.bareFetchUs).toFixed(2)}×; cost ${costUs.toFixed(2)} µs per step`,
    ...r.steps.map((s) => `  ${s.stepMs} ms step: ${((costUs / 1000 / s.stepMs) * 100).toFixed(4)} % of the step from the per-fetch cost; ` +
      `wall ${s.wrappedMs.toFixed(3)} ms wrapped vs ${s.bareMs.toFixed(3)} ms bare over ${s.n} steps (sleep jitter included)`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
