// Turns the compiled command (tsc's dist/cli/bin.js and the ~200 modules under it) into a few files: the entry
// stays dist/cli/bin.js and every command's code moves into chunks under dist/cli/chunks/, split at the
// commands' dynamic imports, so `gpumem status` still loads only what status uses. Node 20 spends most of a
// one-shot command's start-up resolving, reading and compiling modules one by one; in chunks the same code
// costs about 15 ms less CPU (docs/status.md, "Start-up"). The rest of dist/ stays as tsc wrote it: the
// library (dist/index.js), the watchdog and the analysis worker (programs started by path) and the assets.
//
// Modules find files through `new URL('../../…', import.meta.url)` (package.json, python/, examples/, the
// watchdog, the worker, the assets). In a chunk, import.meta.url is the chunk's, so each module's is rewritten
// to the URL it had under dist/ — every path it builds then points where tsc's layout put it. That holds only
// for modules that end up in a chunk (one folder deeper than dist/cli/), which the build checks.
//
// Dependencies (koffi, better-sqlite3, yaml, prom-client, …) stay in node_modules: only our own code is bundled.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const cliDir = join(dist, 'cli');
const entry = join(cliDir, 'bin.js');
/** First line of every bundled entry, so a second run (without tsc in between) knows bin.js is done. */
export const BUNDLE_MARK = '// gpumem: bundled by scripts/bundle-cli.mjs';

const usesModuleUrl = new Set();
const moduleUrlPlugin = {
  name: 'gpumem-module-url',
  setup(b) {
    b.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(dist + sep)) return undefined;
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const rel = relative(dist, args.path).split(sep).join('/');
      usesModuleUrl.add(relative(root, args.path).split(sep).join('/'));
      // From dist/cli/chunks/<chunk>.js, '../../' is dist/.
      const url = `new URL(${JSON.stringify(`../../${rel}`)}, import.meta.url).href`;
      return { contents: text.replaceAll('import.meta.url', url), loader: 'js' };
    });
  },
};

/** Bundles dist/cli/bin.js in place; a no-op when it is already the bundle. Returns what it did, for the log. */
export async function bundleCli() {
  const compiled = readFileSync(entry, 'utf8');
  if (compiled.includes(BUNDLE_MARK)) return 'dist/cli/bin.js is already bundled';
  // The launcher lines (#!/bin/sh and the //bin/true line, see bin.ts) are kept byte for byte: esbuild keeps a
  // #! line but drops the second line, a comment to JavaScript.
  const lines = compiled.split('\n');
  const launcher = lines.slice(0, 2);
  if (!launcher[0].startsWith('#!') || !launcher[1].startsWith('//bin/true;')) throw new Error('bundle-cli: dist/cli/bin.js does not start with the launcher lines of src/cli/bin.ts');
  rmSync(join(cliDir, 'chunks'), { recursive: true, force: true });
  const result = await build({
    entryPoints: [entry],
    outdir: cliDir,
    allowOverwrite: true,
    entryNames: '[name]',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    plugins: [moduleUrlPlugin],
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
    write: false,
  });
  const misplaced = [];
  for (const [out, meta] of Object.entries(result.metafile.outputs)) {
    const inChunk = out.includes('/chunks/');
    for (const input of Object.keys(meta.inputs)) if (usesModuleUrl.has(input) && !inChunk) misplaced.push(`${input} → ${out}`);
  }
  if (misplaced.length > 0) throw new Error(`bundle-cli: modules that read import.meta.url landed outside dist/cli/chunks/ (their paths would be wrong): ${misplaced.join(', ')}`);
  // bin.ts's first instruction installs the signal guard before anything else loads (src/supervise/signal-guard.ts):
  // whatever the entry imports statically is evaluated before that instruction, so it must be the guard alone.
  const entryOut = Object.entries(result.metafile.outputs).find(([out]) => join(root, out) === entry)?.[1];
  const before = (entryOut?.imports ?? []).filter((i) => i.kind === 'import-statement' && !i.external);
  const early = before.flatMap((i) => Object.keys(result.metafile.outputs[i.path]?.inputs ?? {})).filter((input) => input !== 'dist/supervise/signal-guard.js');
  if (!entryOut || early.length > 0) throw new Error(`bundle-cli: the entry would load ${early.join(', ') || 'unknown code'} before the signal guard`);
  for (const file of result.outputFiles) {
    if (file.path !== entry) {
      mkdirSync(dirname(file.path), { recursive: true });
      writeFileSync(file.path, file.contents);
      continue;
    }
    const body = file.text.replace(/^#![^\n]*\n/, '');
    writeFileSync(file.path, `${launcher.join('\n')}\n${BUNDLE_MARK}\n${body}`);
  }
  return `bundled dist/cli/bin.js into ${result.outputFiles.length - 1} chunks`;
}
