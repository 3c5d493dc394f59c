/**
 * `gpumem explain` throughput: generates a training log (GPUMEM_BENCH_EXPLAIN_MB, default 1024 MB) with
 * OOMs of several families, then scans it streaming with our scanner and with `grep -c -E` over the same
 * marker phrases, in the same run. Prints both throughputs, the ratio and the scanner's peak RSS.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOomScanner, OOM_MARKER_PHRASES } from '../src/core/index.js';
import { createDecoder, readRange } from '../src/cli/commands/explain-input.js';

const OOMS = [
  'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total capacity of 79.25 GiB of which 1.79 GiB is free. Including non-PyTorch memory, this process has 77.46 GiB memory in use. Of the allocated memory 76.04 GiB is allocated by PyTorch, and 13.88 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)',
  'RuntimeError: CUDA error: out of memory',
  "host:1:2 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'",
  'jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 14285187448 bytes.',
];

function generate(path: string, targetBytes: number): number {
  const lines: string[] = [];
  for (let i = 0; i < 5000; i++) {
    lines.push(`2024-05-01 12:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')},123 INFO trainer.py:88 epoch 3 step ${i} loss=${(1 + (i % 97) / 100).toFixed(4)} lr=3.0e-4 grad_norm=0.${i % 1000} tokens/s=${41000 + (i % 900)} mem_allocated=12.3GiB`);
  }
  const block = `${lines.join('\n')}\n`;
  const fd = openSync(path, 'w');
  let written = 0;
  let blocks = 0;
  const every = Math.max(1, Math.floor(targetBytes / block.length / (OOMS.length * 2)));
  while (written < targetBytes) {
    written += writeSync(fd, block);
    if (++blocks % every === 0) written += writeSync(fd, `Traceback (most recent call last):\n  File "/home/u/train.py", line 88, in main\n    loss = model(x)\n${OOMS[(blocks / every) % OOMS.length]}\n`);
  }
  closeSync(fd);
  return written;
}

export async function run(): Promise<void> {
  const mb = Number(process.env.GPUMEM_BENCH_EXPLAIN_MB ?? 1024);
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-explain-bench-'));
  const path = join(dir, 'train.log');
  try {
    const bytes = generate(path, mb * 1e6);
    // Warm the page cache so neither side pays for the disk.
    execFileSync('cat', [path], { stdio: 'ignore', maxBuffer: 1 << 30 });
    const pattern = OOM_MARKER_PHRASES.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
    const g0 = performance.now();
    const grepCount = execFileSync('grep', ['-c', '-i', '-E', pattern, path], { env: { ...process.env, LC_ALL: 'C' } }).toString().trim();
    const grepSeconds = (performance.now() - g0) / 1000;

    const scanner = createOomScanner();
    let events = 0;
    const baseRss = process.memoryUsage.rss();
    let peakRss = baseRss;
    const t0 = performance.now();
    const fd = openSync(path, 'r');
    readRange(fd, 0, (text) => {
      events += scanner.push(text).length;
      peakRss = Math.max(peakRss, process.memoryUsage.rss());
    }, createDecoder());
    closeSync(fd);
    events += scanner.end().length;
    const oursSeconds = (performance.now() - t0) / 1000;
    const mbps = (s: number): string => `${(bytes / 1e6 / s).toFixed(0)} MB/s`;
    process.stdout.write(`log: ${(bytes / 1e6).toFixed(0)} MB, generated with OOMs of 4 families\n`);
    process.stdout.write(`grep -c -i -E (LC_ALL=C): ${grepSeconds.toFixed(2)} s, ${mbps(grepSeconds)}, ${grepCount} matching lines\n`);
    process.stdout.write(`gpumem scanner:           ${oursSeconds.toFixed(2)} s, ${mbps(oursSeconds)}, ${events} events (repeats merged)\n`);
    process.stdout.write(`ratio (ours / grep throughput): ${(grepSeconds / oursSeconds).toFixed(2)}×  (target ≥ 1×)\n`);
    process.stdout.write(`peak RSS while scanning: ${(peakRss / 2 ** 20).toFixed(0)} MiB (before scanning: ${(baseRss / 2 ** 20).toFixed(0)} MiB, growth ${((peakRss - baseRss) / 2 ** 20).toFixed(0)} MiB; target < 100 MiB)\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
