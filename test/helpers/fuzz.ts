/**
 * How many cases a property test (fast-check) tries: the full count in CI (CI=true), a fifth of it (at
 * least 20) locally, so a local run stays quick and CI still searches widely.
 */
export const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

/** `fc.assert(…, { numRuns: runs(400) })`: 400 in CI, 80 locally. */
export function runs(ciRuns: number): number {
  return IN_CI ? ciRuns : Math.max(20, Math.ceil(ciRuns / 5));
}

/** mulberry32: a small seeded generator, so every run draws the same values. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
