/**
 * The page's files, served from gpumem's own origin: index.html, app.js, app.css and uPlot. The build
 * copies them into dist/server/assets and bundles app.js there from src/server/page/ (scripts/finish-build.mjs);
 * run from source, uPlot is read from its package and app.js is bundled at start. All are read once at start
 * and kept in memory (about 80 KiB).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { ServerResponse } from 'node:http';
import { send } from '../http/respond.js';
import { bundlePage } from '../page-bundle.js';

interface Asset {
  type: string;
  body: Buffer;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** Served name → [file in assets/, fallback module path]. */
const FILES: Record<string, [string, string | null]> = {
  '/': ['index.html', null],
  '/assets/app.js': ['app.js', null],
  '/assets/app.css': ['app.css', null],
  '/assets/uPlot.iife.min.js': ['uPlot.iife.min.js', 'uplot/dist/uPlot.iife.min.js'],
  '/assets/uPlot.min.css': ['uPlot.min.css', 'uplot/dist/uPlot.min.css'],
};

/** Run from the TypeScript sources (the tests), where the page's script exists only as src/server/page/. */
const RUN_FROM_SOURCE = import.meta.url.endsWith('.ts');
const PAGE_ENTRY = fileURLToPath(new URL('../page/app.ts', import.meta.url));

function assetDir(): string {
  return fileURLToPath(new URL('../assets/', import.meta.url));
}

/** Reads every page file; throws when one is missing (a broken install). */
export function loadAssets(dir = assetDir()): Map<string, Asset> {
  const require = createRequire(import.meta.url);
  const out = new Map<string, Asset>();
  for (const [route, [file, fallback]] of Object.entries(FILES)) {
    const local = `${dir}${file}`;
    const path = existsSync(local) || fallback === null ? local : require.resolve(fallback);
    const ext = file.slice(file.lastIndexOf('.'));
    const body = route === '/assets/app.js' && !existsSync(local) && RUN_FROM_SOURCE ? Buffer.from(bundlePage(PAGE_ENTRY)) : readFileSync(path);
    out.set(route, { type: TYPES[ext] ?? 'application/octet-stream', body });
  }
  return out;
}

/** Serves a page file; false when `path` is not one. */
export function serveAsset(res: ServerResponse, path: string, assets: Map<string, Asset>): boolean {
  const asset = assets.get(path === '/index.html' ? '/' : path);
  if (!asset) return false;
  send(res, 200, asset.type, asset.body, { 'Cache-Control': 'no-cache' });
  return true;
}
