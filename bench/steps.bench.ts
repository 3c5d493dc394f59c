/**
 * The companion's step timing per step, in Python: the DataLoader `__next__` wrapper against a bare fetch
 * (the peer) with the fake torch, then the copy and synchronisation wrappers against the bare calls (fake
 * torch, and real torch on the CPU when the test environment has it), and the cost of a typical step's calls
 * as a share of 1, 10 and 100 ms steps; and the per-step memory records of the OOM forecast against a recorder
 * with them off.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = (p: string): string => fileURLToPath(new URL(`../${p}`, import.meta.url));

interface Result { fetches: number; bareFetchUs: number; wrappedFetchUs: number; messages: number; steps: Array<{ stepMs: number; n: number; bareMs: number; wrappedMs: number }> }

interface Kinds { calls: number; torch: string; kinds: Array<{ kind: string; bareUs: number; wrappedUs: number }> }

const FAKE_TORCH = [root('test/python/fake_torch_versions/v2_11'), root('python')].join(':');

async function python(exe: string, script: string, args: string[], pythonPath: string): Promise<string> {
  const child = spawn(exe, [root(script), ...args], { env: { ...process.env, PYTHONPATH: pythonPath } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  if (code !== 0) throw new Error(`${script} failed: ${err}`);
  return out;
}

/** What a small training step calls besides the fetch: the batch and its labels copied, one loss.item(). */
const TYPICAL = { copies: 2, syncs: 1 };

function transferLines(label: string, r: Kinds, fetchCostUs: number): string[] {
  const cost = (needle: string): number | null => {
    const k = r.kinds.find((x) => x.kind.startsWith(needle));
    return k ? Math.max(0, k.wrappedUs - k.bareUs) : null;
  };
  const lines = [`copy and synchronisation wrappers, ${label} (torch ${r.torch}), best of 5 × ${r.calls} calls:`,
    ...r.kinds.map((k) => `  ${k.kind}: ${k.wrappedUs.toFixed(2)} µs wrapped vs peer ${k.bareUs.toFixed(2)} µs bare ` +
      `(${(k.wrappedUs / k.bareUs).toFixed(2)}×, ${k.wrappedUs >= k.bareUs ? '+' : ''}${(k.wrappedUs - k.bareUs).toFixed(2)} µs)`)];
  const copy = cost('host-to-device copy, wrapper');
  const sync = cost('item() of a CUDA tensor, wrapper');
  const perStep = (cost('Tensor.backward wrapper') ?? 0) + (cost('optimizer.step global hooks') ?? 0);
  // A model's own .to() calls: dtype changes on real torch, same-device calls on the fake one (it has no dtypes).
  const inModel = cost('to(dtype)') ?? cost('to() of a CUDA tensor to its own device') ?? cost('to() of a CPU tensor to its own device');
  if (copy !== null && sync !== null && inModel !== null) {
    const stepUs = fetchCostUs + TYPICAL.copies * copy + TYPICAL.syncs * sync + perStep;
    lines.push(`  step with 1 fetch, ${TYPICAL.copies} copies, ${TYPICAL.syncs} .item(), 1 backward, 1 optimizer.step (no CUDA events): +${stepUs.toFixed(2)} µs = ` +
      [1, 10, 100].map((ms) => `${((stepUs / 1000 / ms) * 100).toFixed(3)} % of a ${ms} ms step`).join(', '));
    const budget = Math.floor((10 - stepUs) / Math.max(inModel, 1e-3));
    lines.push(`  each further .to() inside the model: +${inModel.toFixed(2)} µs; within 1 % of a 1 ms step: up to ${budget} of them per step`);
  }
  return lines;
}

export async function run(): Promise<void> {
  const r = JSON.parse(await python('python3', 'bench/python/steps_overhead_fake.py', ['200000'], FAKE_TORCH)) as Result;
  const costUs = r.wrappedFetchUs - r.bareFetchUs;
  const lines = [
    `step timing wrapper: ${r.wrappedFetchUs.toFixed(2)} µs/fetch wrapped over ${r.fetches} fetches (${r.messages} messages sent)`,
    `peer: bare DataLoader fetch:  ${r.bareFetchUs.toFixed(2)} µs/fetch`,
    `ratio wrapped/peer: ${(r.wrappedFetchUs / r.bareFetchUs).toFixed(2)}×; cost ${costUs.toFixed(2)} µs per step`,
    ...r.steps.map((s) => `  ${s.stepMs} ms step: ${((costUs / 1000 / s.stepMs) * 100).toFixed(4)} % of the step from the per-fetch cost; ` +
      `wall ${s.wrappedMs.toFixed(3)} ms wrapped vs ${s.bareMs.toFixed(3)} ms bare over ${s.n} steps (sleep jitter included)`),
  ];
  lines.push(...transferLines('fake torch', JSON.parse(await python('python3', 'bench/python/transfers_overhead.py', ['100000'], FAKE_TORCH)) as Kinds, costUs));
  const m = JSON.parse(await python('python3', 'bench/python/step_memory_overhead.py', ['100000'], FAKE_TORCH)) as { steps: number; bareUs: number; recordUs: number; historyUs: number };
  lines.push(`per-step memory records (OOM forecast), fake torch, best of 5 × ${m.steps} optimizer steps:`,
    `  record (read counters, reset peaks, keep): ${m.recordUs.toFixed(2)} µs vs peer ${m.bareUs.toFixed(2)} µs (step memory off); with the callbacks' history: ${m.historyUs.toFixed(2)} µs`,
    `  = ${(((m.historyUs - m.bareUs) / 1000 / 10) * 100).toFixed(3)} % of a 10 ms step, plus torch's own counter read on a GPU (not measured here)`);
  const venv = root('.venv/bin/python');
  if (existsSync(venv)) {
    lines.push(...transferLines('real torch on the CPU (no CUDA: copy-path kinds from the stub)', JSON.parse(await python(venv, 'bench/python/transfers_overhead.py', ['100000'], root('python'))) as Kinds, costUs));
  } else {
    lines.push('real torch: not measured (no .venv; python3 -m venv .venv && .venv/bin/pip install -r python/requirements-test.txt)');
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
