// Runs after tsc. tsc rewrites dist/cli/bin.js without its executable bit, and `npx gpumem` in a checkout runs
// that file directly, so every build (not only npm's first bin linking at install) makes it executable again.
// It also copies the dashboard's files (our own and uPlot's) next to the compiled server and bundles the page's
// script (src/server/page/, TypeScript) there with esbuild, so the installed package serves them from its own
// origin without reaching for node_modules or a CDN. First of all it bundles the command into chunks
// (scripts/bundle-cli.mjs says why).
import { chmodSync, copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const { bundleCli } = await import('./bundle-cli.mjs');
process.stdout.write(`finish-build: ${await bundleCli()}\n`);
chmodSync(new URL('../dist/cli/bin.js', import.meta.url), 0o755);

const require = createRequire(import.meta.url);
const out = new URL('../dist/server/assets/', import.meta.url);
mkdirSync(out, { recursive: true });
const src = new URL('../src/server/assets/', import.meta.url);
for (const name of readdirSync(src)) copyFileSync(new URL(name, src), new URL(name, out));
for (const name of ['uPlot.iife.min.js', 'uPlot.min.css']) copyFileSync(require.resolve(`uplot/dist/${name}`), new URL(name, out));
const { bundlePage } = await import('../dist/server/page-bundle.js');
writeFileSync(new URL('app.js', out), bundlePage(fileURLToPath(new URL('../src/server/page/app.ts', import.meta.url))));
