// Bundles the built CLI (dist/cli/bin.js) and the GPU status bench into single files under .device/, for a
// GPU machine that has no npm. Used by scripts/stage-device.sh; run it after `npm run build`.
//
// koffi and better-sqlite3 stay external (they load native .node files next to their own JS); the stage
// script copies a minimal copy of them into .device/node_modules.
//
// Three modules find files through `new URL('../../…', import.meta.url)` (package.json, python/,
// examples/). In one bundle every module shares the bundle's import.meta.url, so each of those depths would
// be wrong. The plugin below gives every module the URL it would have had at .device/dist/<its path>, which
// makes .device/ look like the package root: .device/package.json, .device/python, .device/examples.
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = process.argv[2] ? resolve(process.argv[2]) : join(root, '.device');
const distDir = join(root, 'dist');

/** Rewrites import.meta.url in a dist module to the URL that module would have under .device/dist/. */
const moduleUrlPlugin = {
  name: 'gpumem-module-url',
  setup(b) {
    b.onLoad({ filter: /\.js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      if (!args.path.startsWith(distDir + sep) || !text.includes('import.meta.url')) return undefined;
      const rel = relative(distDir, args.path).split(sep).join('/');
      const url = `new URL(${JSON.stringify(`./dist/${rel}`)}, import.meta.url).href`;
      return { contents: text.replaceAll('import.meta.url', url), loader: 'js' };
    });
  },
};

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['koffi', 'better-sqlite3'],
  // CommonJS dependencies bundled into ESM still call require() for node builtins.
  banner: { js: "import { createRequire as __gpumemCreateRequire } from 'node:module'; const require = __gpumemCreateRequire(import.meta.url);" },
  plugins: [moduleUrlPlugin],
  legalComments: 'none',
  logLevel: 'warning',
};

await build({ ...common, entryPoints: [join(distDir, 'cli', 'bin.js')], outfile: join(outDir, 'gpumem.mjs') });
// The run watchdog is a program of its own, started by path (supervise/watchdog.ts): it goes where the bundle's
// supervise/watchdog.js looks for it, .device/dist/supervise/watchdog-main.js.
await build({ ...common, entryPoints: [join(distDir, 'supervise', 'watchdog-main.js')], outfile: join(outDir, 'dist', 'supervise', 'watchdog-main.js') });
// serve's snapshot analyses run in a worker started by path: the bundle's server/analysis/run-analysis.js looks
// for it at .device/dist/server/analysis/worker.js.
await build({ ...common, entryPoints: [join(distDir, 'server', 'analysis', 'worker.js')], outfile: join(outDir, 'dist', 'server', 'analysis', 'worker.js') });
// The bench imports the sources' TypeScript directly (it is not part of dist/).
await build({
  ...common,
  entryPoints: [join(root, 'bench', 'gpu', 'status-bench.ts')],
  outfile: join(outDir, 'status-bench.mjs'),
  plugins: [],
});
process.stdout.write(`bundled ${relative(root, join(outDir, 'gpumem.mjs'))}, its watchdog, the analysis worker and ${relative(root, join(outDir, 'status-bench.mjs'))}\n`);
