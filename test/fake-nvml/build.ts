/**
 * Builds the fake libnvidia-ml.so.1 once per imitated driver era, into build/fake-nvml/<era>/. Symbols an
 * era lacks are left out at compile time (-DFAKE_ERA), so they are really missing from that .so, exactly
 * as on an old driver. Rebuilds only when a C source is newer than the library.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The driver generations the fake imitates (see docs/nvml.md for what each one changes). */
export const FAKE_ERAS = {
  '450': 450051,
  '510': 510039,
  '535.54': 535054,
  '535.104': 535104,
  '590': 590048,
} as const;
export type FakeEra = keyof typeof FAKE_ERAS;

const SRC_DIR = fileURLToPath(new URL('.', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Path of the built fake driver for one era (build it first with buildFakeNvml). */
export function fakeNvmlLib(era: FakeEra): string {
  return join(ROOT, 'build', 'fake-nvml', era, 'libnvidia-ml.so.1');
}

function newestSourceMs(): number {
  return Math.max(
    ...readdirSync(SRC_DIR)
      .filter((f) => f.endsWith('.c') || f.endsWith('.h'))
      .map((f) => statSync(join(SRC_DIR, f)).mtimeMs),
  );
}

/**
 * Compiles every era that is missing or older than its C sources. Throws one clear error when gcc is
 * absent, because without it none of the NVML tests can run.
 */
export async function buildFakeNvml(): Promise<void> {
  const sources = readdirSync(SRC_DIR).filter((f) => f.endsWith('.c')).map((f) => join(SRC_DIR, f));
  const newest = newestSourceMs();
  for (const [era, code] of Object.entries(FAKE_ERAS) as Array<[FakeEra, number]>) {
    const out = fakeNvmlLib(era);
    if (existsSync(out) && statSync(out).mtimeMs >= newest) continue;
    mkdirSync(join(out, '..'), { recursive: true });
    // Build beside the target and rename, so a concurrent reader never loads a half-written library.
    const tmp = `${out}.${process.pid}.tmp`;
    const args = ['-shared', '-fPIC', '-O2', '-Wall', '-fvisibility=hidden', `-DFAKE_ERA=${code}`,
      '-Wl,-soname,libnvidia-ml.so.1', '-o', tmp, ...sources];
    try {
      execFileSync('gcc', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: Buffer };
      if (e.code === 'ENOENT') {
        throw new Error('gcc not found: the fake libnvidia-ml.so.1 used by the tests is built from C (install gcc, e.g. `apt-get install gcc`)');
      }
      throw new Error(`building the fake NVML for era ${era} failed:\n${e.stderr?.toString() ?? String(err)}`);
    }
    renameSync(tmp, out);
  }
}
