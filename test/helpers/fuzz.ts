/**
 * How many cases a property test (fast-check) tries: the full count in CI (CI=true), a fifth of it (at
 * least 20) locally, so a local run stays quick and CI still searches widely.
 */
export const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

/** `fc.assert(…, { numRuns: runs(400) })`: 400 in CI, 80 locally. */
export function runs(ciRuns: number): number {
  return IN_CI ? ciRuns : Math.max(20, Math.ceil(ciRuns / 5));
}
