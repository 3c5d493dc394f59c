/**
 * `gpumem explain` throughput: generates a training log (GPUMEM_BENCH_EXPLAIN_MB, default 1024 MB) with
 * OOMs of every framework family and a piece of a message, then runs, alternately and GPUMEM_BENCH_EXPLAIN_REPEATS times (default 3),
 * `grep -c -i -E` over the same marker phrases and the built CLI (`node dist/cli/bin.js explain FILE --json`
 * in a child process). Both sides are timed from spawn to exit, so ours includes Node's start-up, and by CPU
 * time (bash `times`), which other load on the machine disturbs less. Prints every pair, both throughputs
 * and the ratio, and the child's peak RSS (VmHWM from its /proc/self/status)
 * on the full log, on an 8 MB log and on an empty one, to show memory does not grow with the log.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OOM_MARKER_PHRASES } from '../src/core/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const OOMS = [
  'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total capacity of 79.25 GiB of which 1.79 GiB is free. Including non-PyTorch memory, this process has 77.46 GiB memory in use. Of the allocated memory 76.04 GiB is allocated by PyTorch, and 13.88 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)',
  'RuntimeError: CUDA error: out of memory',
  "host:1:2 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'",
  'jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 14285187448 bytes.',
  'cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 25,600,000 bytes (allocated so far: 3,635,267,072 bytes).',
  'Out of memory error on GPU 0. Cannot allocate 98.000244MB memory on GPU 0, 6.000000GB memory has been allocated and available memory is only 0.000000B.',
  'ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: cudaMalloc failed: out of memory\nggml_gallocr_reserve_n: failed to allocate CUDA1 buffer of size 10345253120',
  "ValueError: To serve at least one request with the models's max seq len (262144), (24.0 GiB KV cache is needed, which is larger than the available KV cache memory (3.18 GiB).",
  'onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 285081600',
  'WARNING: [TRT]: Requested amount of GPU memory (4294967296 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.',
  'numba.cuda.cudadrv.driver.CudaAPIError: [2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY',
  '4.74 GiB reserved in total by PyTorch)',
];

/** The child: the CLI's own entry, plus a hook that reports the process's peak RSS on stderr at exit. */
const CHILD = `
const { readFileSync, writeSync } = require('node:fs');
process.on('exit', () => {
  const hwm = /VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  writeSync(2, '\\nvmhwm-kib ' + (hwm ? hwm[1] : 'n/a') + '\\n');
});
import(process.argv[1]).then(({ main }) => main(process.argv.slice(2))).then((code) => { process.exitCode = code; });`;

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

interface Timed {
  seconds: number;
  /** CPU time (user + system) of the command, from bash's `times`: less disturbed by other load than wall time. */
  cpuSeconds: number;
  stdout: string;
  stderr: string;
}

/** Runs a command under bash, timed from spawn to exit, with its CPU time reported by `times` on stderr. */
function timed(command: string, args: string[], env?: NodeJS.ProcessEnv): Timed {
  const t0 = performance.now();
  const r = spawnSync('bash', ['-c', '"$@"; code=$?; times >&2; exit $code', 'bash', command, ...args], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: env ?? process.env,
  });
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0 && r.status !== 1) throw new Error(`${command} failed (${String(r.status)}): ${r.stderr}`);
  // The last line of `times` is the children's user and system time, e.g. "0m1.234s 0m0.056s".
  const last = r.stderr.trim().split('\n').pop() ?? '';
  const cpu = [...last.matchAll(/(\d+)m([\d.]+)s/g)].reduce((sum, m) => sum + Number(m[1]) * 60 + Number(m[2]), 0);
  return { seconds, cpuSeconds: cpu, stdout: r.stdout, stderr: r.stderr };
}

/** Runs `gpumem explain FILE --json` in a child; returns its times, event count and peak RSS in bytes. */
function ours(path: string): { seconds: number; cpuSeconds: number; events: number; peakRssBytes: number | null } {
  const r = timed(process.execPath, ['-e', CHILD, `${ROOT}dist/cli/main.js`, 'explain', path, '--json']);
  const hwm = /vmhwm-kib (\d+)/.exec(r.stderr);
  const json = JSON.parse(r.stdout) as { events: unknown[] };
  return { seconds: r.seconds, cpuSeconds: r.cpuSeconds, events: json.events.length, peakRssBytes: hwm ? Number(hwm[1]) * 1024 : null };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const mib = (b: number | null): string => (b === null ? 'n/a' : `${(b / 2 ** 20).toFixed(0)} MiB = ${(b / 1e6).toFixed(0)} MB`);

export async function run(): Promise<void> {
  const mb = Number(process.env.GPUMEM_BENCH_EXPLAIN_MB ?? 1024);
  const repeats = Math.max(1, Number(process.env.GPUMEM_BENCH_EXPLAIN_REPEATS ?? 3));
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-explain-bench-'));
  const path = join(dir, 'train.log');
  try {
    const bytes = generate(path, mb * 1e6);
    const small = join(dir, 'small.log');
    generate(small, 8e6);
    const empty = join(dir, 'empty.log');
    writeFileSync(empty, '');
    // Warm the page cache so neither side pays for the disk.
    spawnSync('cat', [path], { stdio: 'ignore' });
    const pattern = OOM_MARKER_PHRASES.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
    const grepEnv = { ...process.env, LC_ALL: 'C' };
    const mbps = (s: number): string => `${(bytes / 1e6 / s).toFixed(0)} MB/s`;
    process.stdout.write(`log: ${(bytes / 1e6).toFixed(0)} MB, ${OOMS.length} kinds of OOM (every recognizer active); ${repeats} alternating runs per side\n`);
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    let peak: number | null = null;
    for (let i = 0; i < repeats; i++) {
      const g = timed('grep', ['-c', '-i', '-E', pattern, path], grepEnv);
      const o = ours(path);
      peak = o.peakRssBytes === null ? peak : Math.max(peak ?? 0, o.peakRssBytes);
      ratios.push(g.seconds / o.seconds);
      cpuRatios.push(g.cpuSeconds / o.cpuSeconds);
      process.stdout.write(
        `  run ${i + 1}: grep -c -i -E (LC_ALL=C) ${g.seconds.toFixed(2)} s (cpu ${g.cpuSeconds.toFixed(2)} s), ${mbps(g.seconds)}, ${g.stdout.trim()} matching lines | ` +
          `gpumem explain --json ${o.seconds.toFixed(2)} s (cpu ${o.cpuSeconds.toFixed(2)} s), ${mbps(o.seconds)}, ${o.events} events (repeats merged), peak RSS ${mib(o.peakRssBytes)} | ` +
          `ratio ${(g.seconds / o.seconds).toFixed(2)}× (cpu ${(g.cpuSeconds / o.cpuSeconds).toFixed(2)}×)\n`,
      );
    }
    const spread = (xs: number[]): string => `median ${median(xs).toFixed(2)}×, range ${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}×`;
    process.stdout.write(`ratio (ours / grep throughput, wall): ${spread(ratios)}  (target ≥ 1×)\n`);
    process.stdout.write(`ratio by CPU time (user + system):  ${spread(cpuRatios)}\n`);
    const smallPeak = ours(small).peakRssBytes;
    const emptyPeak = ours(empty).peakRssBytes;
    process.stdout.write(`peak RSS of gpumem explain (child node on dist/, VmHWM): ${mib(peak)} on ${(bytes / 1e6).toFixed(0)} MB, ${mib(smallPeak)} on 8 MB, ${mib(emptyPeak)} on an empty log  (target < 100 MB)\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
