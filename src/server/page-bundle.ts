/**
 * The page's script: src/server/page/app.ts with what it imports, bundled by esbuild into one classic script
 * (index.html loads it with `defer`; the types it shares with the server leave nothing behind). The build
 * writes it to dist/server/assets/app.js (scripts/finish-build.mjs); run from the TypeScript sources (the
 * tests), the server bundles it at start. esbuild is a dev dependency: an installed package never calls this.
 */
import { createRequire } from 'node:module';

/** The bundled script of the page whose entry is `entryPath` (src/server/page/app.ts). */
export function bundlePage(entryPath: string): string {
  const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const result = esbuild.buildSync({ entryPoints: [entryPath], bundle: true, format: 'iife', target: 'es2022', charset: 'utf8', legalComments: 'none', write: false });
  return result.outputFiles[0]?.text ?? '';
}
