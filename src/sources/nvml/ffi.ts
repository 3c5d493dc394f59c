/**
 * koffi, loaded for a one-shot command's start-up. koffi's own entry finds its native module through a loader that
 * also pulls in its build tools (https, crypto, zlib): about 10 ms of a 70-ms `gpumem status`. On the platforms
 * it ships a prebuilt module for by plain name (glibc Linux on x64 and arm64), that module is loaded directly —
 * the same file the entry would pick, checked to be the same version; anywhere else, or when that load fails
 * (a musl system), the entry decides as it always did. Nothing here changes which library is called or how.
 */
import { createRequire } from 'node:module';
import type koffiModule from 'koffi';

type Koffi = typeof koffiModule;

const DIRECT_ARCHES = new Set(['x64', 'arm64']);

function loadKoffi(): Koffi {
  const require = createRequire(import.meta.url);
  if (process.platform === 'linux' && DIRECT_ARCHES.has(process.arch)) {
    try {
      const { version } = require('koffi/package.json') as { version: string };
      const native = require(`koffi/build/koffi/linux_${process.arch}/koffi.node`) as Koffi & { version?: string };
      if (native.version === version) return native;
    } catch {
      // Not loadable here (musl, a stripped install): koffi's own entry below finds the right one or says why.
    }
  }
  return require('koffi') as Koffi;
}

export const koffi: Koffi = loadKoffi();
