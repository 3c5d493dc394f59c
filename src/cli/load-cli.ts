/**
 * How bin.ts gets the command's code: from the bundle and its code cache (code-cache.ts) when the build wrote
 * them, else from the compiled modules (a tree straight from tsc). The bundle's name and content hash come from
 * scripts/bundle-cli.mjs, which sets GPUMEM_BUNDLE when it bundles bin.js; tsc's own bin.js leaves it undefined.
 */
import { loadBundle } from './code-cache.js';

type CliEntry = typeof import('./cli-entry.js');
declare const GPUMEM_BUNDLE: { file: string; hash: string } | undefined;

export async function loadCli(): Promise<CliEntry> {
  if (typeof GPUMEM_BUNDLE === 'object') {
    const loaded = loadBundle(new URL(GPUMEM_BUNDLE.file, import.meta.url), GPUMEM_BUNDLE.hash);
    if (loaded) return loaded.exports as unknown as CliEntry;
  }
  return import('./cli-entry.js');
}
