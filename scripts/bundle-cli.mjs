// Turns the compiled command (tsc's dist/cli/bin.js and the ~200 modules under it) into three kinds of file:
//  - dist/cli/gpumem.cjs: every module the commands use, as one CommonJS file (commands still evaluated only
//    when dispatched: esbuild keeps a dynamic import's module lazy);
//  - its V8 code caches, one per set of flags the launcher line starts Node with (src/cli/code-cache.ts);
//  - dist/cli/bin.js: the launcher lines, the signal guard and the loader (src/cli/load-cli.ts) only, and
//    dist/cli/bin.cjs, the same as CommonJS, which the launcher line starts Node on.
// Node 20 spends most of a one-shot command's start-up resolving, linking and compiling ES modules one by one;
// one file compiled from its cache skips all of it (docs/status.md, "Start-up", has the figures). The rest of
// dist/ stays as tsc wrote it: the library (dist/index.js), the watchdog and the analysis worker (programs
// started by path), the assets, and the compiled modules bin.js falls back to when the bundle is missing.
//
// Modules find files through `new URL('../../…', import.meta.url)` (package.json, python/, examples/, the
// watchdog, the worker, the assets). In the bundle each module's import.meta.url is rewritten to the URL it had
// under dist/, so every path it builds points where tsc's layout put it.
//
// Dependencies (koffi, better-sqlite3, yaml, prom-client, …) stay in node_modules: only our own code is bundled.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const cliDir = join(dist, 'cli');
const entry = join(cliDir, 'bin.js');
const BUNDLE_NAME = 'gpumem.cjs';
const bundleFile = join(cliDir, BUNDLE_NAME);
const binCjs = join(cliDir, 'bin.cjs');
/** The dist/ folder's URL, for the rewritten import.meta.url of modules in a CommonJS file under dist/cli/. */
const DIST_URL = 'var __gpumemDist=require("node:url").pathToFileURL(require("node:path").join(__dirname,"..")+"/").href;';
/** First line of every bundled entry, so a second run (without tsc in between) knows bin.js is done. */
export const BUNDLE_MARK = '// gpumem: bundled by scripts/bundle-cli.mjs';

/** The bundle's modules: import.meta.url becomes the module's URL under dist/, from where the bundle lies. */
const moduleUrlPlugin = {
  name: 'gpumem-module-url',
  setup(b) {
    b.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(dist + sep)) return undefined;
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const rel = relative(dist, args.path).split(sep).join('/');
      return { contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, __gpumemDist).href`), loader: 'js' };
    });
  },
};

/** bin.js's fallback (the compiled modules) stays an import of tsc's file, not a second copy of the commands. */
const keepEntryOut = {
  name: 'gpumem-keep-cli-entry-out',
  setup(b) {
    b.onResolve({ filter: /\/cli-entry\.js$/ }, (args) => ({ path: args.path, external: true }));
  },
};

/**
 * The flag sets of the launcher line (`exec node <flags> "$f"`), each with the commands it starts (its case arm's
 * words; '*' for the line's last exec, every other command), and none: how tests and `node bin.js` run it.
 */
function launcherFlagSets(line) {
  const sets = [...line.matchAll(/(?:([\w|]+)\) )?exec node ((?:--\S+ )*)"\$f"/g)].map((m) => ({ commands: m[1] ? m[1].split('|') : ['*'], flags: m[2].trim().split(' ').filter(Boolean) }));
  if (sets.length === 0) throw new Error('bundle-cli: no `exec node … "$f"` in the launcher line of src/cli/bin.ts');
  return [{ commands: ['*'], flags: [] }, ...sets];
}

/**
 * What each code cache is written after (code-cache.ts writeCodeCache): the commands its Node starts, run on
 * the bundled example recording, so no GPU, driver or compiler is needed at build time. `status` for its arm;
 * the quick start's doctor for every other command; nothing for `watch`, which needs a terminal.
 */
function workloadOf(commands) {
  const example = join(root, 'examples', 'doctor-example.ndjson');
  // A tree without the example (a partial copy) gets caches of the top level: slower to start, not broken.
  if (!existsSync(example)) return [];
  if (commands.includes('status')) return [['status', '--json', '--replay', example], ['status', '--replay', example]];
  if (commands.includes('*')) return [['doctor', '--replay', example]];
  return [];
}

async function bundleCommands() {
  const result = await build({
    entryPoints: [join(cliDir, 'cli-entry.js')],
    outfile: bundleFile,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    plugins: [moduleUrlPlugin],
    // Comments and indentation out: a fifth less to read and hash; names stay, so stack traces still read.
    minifyWhitespace: true,
    charset: 'ascii',
    banner: { js: DIST_URL },
    legalComments: 'none',
    logLevel: 'warning',
    write: false,
  });
  const bytes = result.outputFiles[0].contents;
  // code-cache.ts reads the bundle as latin1, which equals UTF-8 only for ASCII.
  const wide = bytes.findIndex((b) => b > 0x7f);
  if (wide >= 0) throw new Error(`bundle-cli: ${BUNDLE_NAME} has a non-ASCII byte at offset ${wide} (a regular expression with a literal non-ASCII character? write it as \\u….)`);
  return bytes;
}

/** Bundles dist/cli/bin.js in place; a no-op when it is already the bundle. Returns what it did, for the log. */
export async function bundleCli() {
  const compiled = readFileSync(entry, 'utf8');
  if (compiled.includes(BUNDLE_MARK)) return 'dist/cli/bin.js is already bundled';
  // The launcher lines (#!/bin/sh and the //bin/true line, see bin.ts) are kept byte for byte: esbuild keeps a
  // #! line but drops the second line, a comment to JavaScript.
  const lines = compiled.split('\n');
  const launcher = lines.slice(0, 2);
  if (!launcher[0].startsWith('#!') || !launcher[1].startsWith('//bin/true;')) throw new Error('bundle-cli: dist/cli/bin.js does not start with the launcher lines of src/cli/bin.ts');
  // Earlier layouts and earlier builds' caches go: a cache must never outlive the bundle it was made from.
  rmSync(join(cliDir, 'chunks'), { recursive: true, force: true });
  rmSync(binCjs, { force: true });
  for (const name of readdirSync(cliDir)) if (name.startsWith(`${BUNDLE_NAME}.`) && name.endsWith('.cache')) rmSync(join(cliDir, name));

  const bytes = await bundleCommands();
  writeFileSync(bundleFile, bytes);
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 16);

  const define = { GPUMEM_BUNDLE: JSON.stringify({ file: `./${BUNDLE_NAME}`, hash }) };
  const entryBuild = { entryPoints: [entry], bundle: true, platform: 'node', target: 'node20', packages: 'external', define, legalComments: 'none', logLevel: 'warning', metafile: true, write: false };
  // bin.js as an ES module (what `node dist/cli/bin.js` runs), and bin.cjs, the same as CommonJS, which the
  // launcher line runs when it is there: an ES-module entry alone costs Node 20 about 15 ms of start-up.
  const esm = await build({ ...entryBuild, format: 'esm', outfile: entry, allowOverwrite: true, plugins: [keepEntryOut] });
  const cjs = await build({ ...entryBuild, format: 'cjs', outfile: binCjs, plugins: [keepEntryOut, moduleUrlPlugin], banner: { js: DIST_URL } });
  // bin.ts's first instruction installs the signal guard before any of gpumem's code runs: the entry may import
  // only the guard statically (everything else comes by a dynamic import, evaluated after it).
  const expected = ['cli/bin.js', 'cli/code-cache.js', 'cli/load-cli.js', 'supervise/signal-guard.js'];
  for (const result of [esm, cjs]) {
    const inputs = Object.values(result.metafile.outputs)[0]?.inputs ?? {};
    const ours = Object.keys(inputs).filter((p) => !p.startsWith('<define:')).map((p) => relative(dist, join(root, p)).split(sep).join('/')).sort();
    if (JSON.stringify(ours) !== JSON.stringify(expected)) throw new Error(`bundle-cli: the entry would hold ${ours.join(', ')}; expected ${expected.join(', ')}`);
  }
  const body = esm.outputFiles[0].text.replace(/^#![^\n]*\n/, '');
  writeFileSync(entry, `${launcher.join('\n')}\n${BUNDLE_MARK}\n${body}`);
  writeFileSync(binCjs, cjs.outputFiles[0].text.replace(/^#![^\n]*\n/, ''));

  // One cache per flag set, each written by a Node started with those flags (V8 refuses a cache made under others),
  // named for the Node that builds it: the one the launcher finds first on PATH is assumed to be this one.
  const writer = pathToFileURL(join(cliDir, 'code-cache.js')).href;
  const caches = new Set();
  for (const { commands, flags } of launcherFlagSets(launcher[1])) {
    // The writer exits itself: a command run as its workload may leave a timer or a handle behind.
    const script = `import { writeCodeCache } from ${JSON.stringify(writer)}; process.stdout.write(await writeCodeCache(${JSON.stringify(bundleFile)}, ${JSON.stringify(hash)}, ${JSON.stringify(flags)}, ${JSON.stringify(workloadOf(commands))})); process.exit(0);`;
    const r = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    if (r.status !== 0) throw new Error(`bundle-cli: writing the code cache under ${flags.join(' ') || 'no flags'} failed: ${(r.stderr || r.error?.message || '').trim()}`);
    caches.add(relative(cliDir, r.stdout));
  }
  return `bundled the command into dist/cli/${BUNDLE_NAME} (${bytes.length} bytes, ${caches.size} code caches)`;
}
