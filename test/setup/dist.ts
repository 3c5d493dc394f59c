/**
 * The end-to-end tests run the built executable (dist/cli/bin.js): rebuild it when any source file is newer
 * than the build, so `npx vitest` never tests a stale dist/.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function newestMs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMs(path) : statSync(path).mtimeMs);
  }
  return newest;
}

export async function buildDist(): Promise<void> {
  const bin = join(ROOT, 'dist/cli/bin.js');
  const sources = Math.max(newestMs(join(ROOT, 'src')), statSync(join(ROOT, 'tsconfig.json')).mtimeMs);
  if (existsSync(bin) && newestMs(join(ROOT, 'dist')) >= sources) return;
  // What `npm run build` does, without npm's own start-up.
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
  execFileSync(process.execPath, [join(ROOT, 'scripts/finish-build.mjs')], { cwd: ROOT, stdio: 'inherit' });
}
