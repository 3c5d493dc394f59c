/**
 * What differs between PyTorch releases for the simulation. Options the release did not know are refused by
 * its parser ("Unrecognized CachingAllocator option"), so a what-if string is checked against the release the
 * snapshot came from: `expandable_segments` arrived in 2.1, `max_non_split_rounding_mb` in 2.6 (pull request
 * 136174, September 2024). Unknown or missing versions allow everything.
 */

/** Major·minor of a `torch.__version__` string ("2.3.1+cu121" → [2, 3]); null when it does not parse. */
export function parseTorchVersion(version: string | null | undefined): [number, number] | null {
  const m = /^(\d+)\.(\d+)/.exec(version ?? '');
  return m ? [Number(m[1]), Number(m[2])] : null;
}

const SINCE: Record<string, [number, number]> = {
  expandable_segments: [2, 1],
  max_non_split_rounding_mb: [2, 6],
};

/** True when `option` exists in the given release (or the release is unknown). */
export function optionExists(option: string, version: string | null | undefined): boolean {
  const v = parseTorchVersion(version);
  const since = SINCE[option];
  if (!v || !since) return true;
  return v[0] > since[0] || (v[0] === since[0] && v[1] >= since[1]);
}
