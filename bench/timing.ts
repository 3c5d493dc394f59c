/** Timing helpers shared by the benchmarks (the local one on the fake driver and the GPU-machine one). */

/** The median of a list of numbers (NaN for an empty list). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

/** Times `n` calls after a warm-up of `warmup` calls (JIT and caches settle); milliseconds per call. */
export async function timeEach(n: number, fn: () => Promise<unknown>, warmup = 20): Promise<number[]> {
  for (let i = 0; i < Math.min(warmup, n); i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn();
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out;
}
