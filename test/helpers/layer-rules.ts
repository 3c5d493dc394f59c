/**
 * The architecture's rules as functions over a source tree (paths relative to src/ and their text), so the
 * layer test runs the very same rules on the real tree and on a small tree that breaks each of them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { importsIn } from './imports.js';

/** Lowest first: a layer imports only itself and the layers before it. */
export const LAYERS = ['core', 'sources', 'store', 'supervise', 'orchestrate', 'server', 'cli'] as const;

/**
 * Every outside library → the only place allowed to import it (a folder ending in "/", or one file). A
 * library not listed here may not be imported at all: adding one means choosing its one door.
 */
export const GATES: Readonly<Record<string, string>> = {
  koffi: 'sources/nvml/',
  'better-sqlite3': 'store/db/open.ts',
  'prom-client': 'server/metrics/exporter.ts',
  // The pipeline file's reader: its parser and the limits checked on the parsed document.
  yaml: 'supervise/pipeline/',
  // The dev dependency that runs TypeScript: loaded only when gpumem runs from its sources (the tests), where the
  // snapshot analysis worker has no compiled file to start.
  'tsx/esm/api': 'server/analysis/run-analysis.ts',
  // The page's bundler (a dev dependency: the build, and the server run from its sources, call it).
  esbuild: 'server/page-bundle.ts',
  // The page's charts: uPlot's own script defines it in the browser; the page imports only its types.
  uplot: 'server/page/charts.ts',
};

/** The only layer that may end the process or set its exit status. */
export const EXITS_IN = 'cli/';

export interface SourceFile {
  /** Path relative to src/, with "/" separators. */
  rel: string;
  text: string;
}

/** Every .ts file under `dir`. */
export function readTree(dir: string): SourceFile[] {
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((name) => {
      const p = join(d, name);
      return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : [];
    });
  return walk(dir).map((p) => ({ rel: relative(dir, p).split('\\').join('/'), text: readFileSync(p, 'utf8') }));
}

/** Source text without comments, so prose like "process.exit" in a comment is not mistaken for code. */
export function codeOf(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

const layerOf = (rel: string): string => rel.split('/')[0] as string;
const isLayer = (name: string): name is (typeof LAYERS)[number] => (LAYERS as readonly string[]).includes(name);
const isBuiltin = (spec: string): boolean => spec.startsWith('node:');
/** "yaml", "@scope/pkg" from a specifier that may name a file inside the package. */
const packageOf = (spec: string): string => spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');

/** Layers named in LAYERS that have no file in the tree. */
export function missingLayers(files: readonly SourceFile[]): string[] {
  return LAYERS.filter((layer) => !files.some((f) => f.rel.startsWith(`${layer}/`)));
}

/** "from → to" for each import of a higher layer by a lower one. */
export function upwardImports(files: readonly SourceFile[]): string[] {
  const bad: string[] = [];
  for (const { rel, text } of files) {
    const from = layerOf(rel);
    if (!isLayer(from)) continue;
    for (const spec of importsIn(text)) {
      if (!spec.startsWith('.')) continue;
      const target = posix.normalize(posix.join(dirname(rel), spec));
      const to = layerOf(target);
      if (isLayer(to) && LAYERS.indexOf(to) > LAYERS.indexOf(from)) bad.push(`${rel} → ${target}`);
    }
  }
  return bad;
}

/** core/ files that import anything but core/ (Node's modules or a library). */
export function impureCoreImports(files: readonly SourceFile[]): string[] {
  return files.filter((f) => f.rel.startsWith('core/')).flatMap((f) => importsIn(f.text).filter((s) => !s.startsWith('.')).map((s) => `${f.rel}: ${s}`));
}

/** core/ files that read a clock or the environment. */
export function impureCoreCode(files: readonly SourceFile[]): string[] {
  return files.filter((f) => f.rel.startsWith('core/') && /\b(Date\.now|new Date\(\)|process\.[a-z]|performance\.now)/.test(codeOf(f.text))).map((f) => f.rel);
}

/** Imports of an outside library from outside its one door, or of a library that has none. */
export function ungatedImports(files: readonly SourceFile[]): string[] {
  const bad: string[] = [];
  for (const { rel, text } of files) {
    for (const spec of importsIn(text)) {
      if (spec.startsWith('.') || isBuiltin(spec)) continue;
      const gate = GATES[spec] ?? GATES[packageOf(spec)];
      if (gate === undefined) bad.push(`${rel} imports ${spec}, which has no door in GATES`);
      else if (gate.endsWith('/') ? !rel.startsWith(gate) : rel !== gate) bad.push(`${rel} imports ${spec} (only ${gate} may)`);
    }
  }
  return bad;
}

/** Files outside cli/ that end the process or set its exit status. */
export function exitsOutsideCli(files: readonly SourceFile[]): string[] {
  return files.filter((f) => !f.rel.startsWith(EXITS_IN) && /\bprocess\s*\.\s*(exit\s*\(|exitCode\b)/.test(codeOf(f.text))).map((f) => f.rel);
}
