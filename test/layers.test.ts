/**
 * The architecture, enforced: a layer imports only layers below it, core/ touches nothing of Node's, and
 * each outside library enters through exactly one folder.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(__dirname, '../src');
const ORDER = ['core', 'sources', 'store', 'supervise', 'orchestrate', 'server', 'cli'];
/** Outside libraries → the only folder allowed to import them. */
const GATES: Record<string, string> = { koffi: 'sources/nvml', 'better-sqlite3': 'store' };

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  const re = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g;
  for (const m of text.matchAll(re)) found.push((m[1] ?? m[2] ?? m[3]) as string);
  return found;
}

/** Source text without comments, so prose like "the process." in a comment is not mistaken for code. */
function code(file: string): string {
  return readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

const layerOf = (rel: string): string => rel.split('/')[0] as string;

const all = files(SRC).map((f) => ({ file: f, rel: relative(SRC, f) }));

describe('layer rules', () => {
  it('finds the layers', () => {
    for (const layer of ORDER) expect(all.some((f) => f.rel.startsWith(`${layer}/`))).toBe(true);
  });

  it('no lower layer imports a higher one', () => {
    const bad: string[] = [];
    for (const { file, rel } of all) {
      const from = layerOf(rel);
      if (!ORDER.includes(from)) continue;
      for (const spec of imports(file)) {
        if (!spec.startsWith('.')) continue;
        const target = relative(SRC, resolve(dirname(file), spec));
        const to = layerOf(target);
        if (ORDER.includes(to) && ORDER.indexOf(to) > ORDER.indexOf(from)) bad.push(`${rel} → ${target}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('core/ imports nothing from node or outside libraries', () => {
    const bad = all
      .filter((f) => f.rel.startsWith('core/'))
      .flatMap((f) => imports(f.file).filter((s) => !s.startsWith('.')).map((s) => `${f.rel}: ${s}`));
    expect(bad).toEqual([]);
  });

  it('core/ reads no clock and no environment', () => {
    const bad = all
      .filter((f) => f.rel.startsWith('core/'))
      .filter((f) => /\b(Date\.now|new Date\(\)|process\.[a-z]|performance\.now)/.test(code(f.file)))
      .map((f) => f.rel);
    expect(bad).toEqual([]);
  });

  it('each outside library enters through its one folder', () => {
    const bad: string[] = [];
    for (const { file, rel } of all) {
      for (const spec of imports(file)) {
        const gate = GATES[spec];
        if (gate && !rel.startsWith(`${gate}/`)) bad.push(`${rel} imports ${spec}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('detects a violation (the rule can fail)', () => {
    expect(imports(__filename).length).toBeGreaterThan(0);
    const sample = "import { x } from '../cli/main.js';";
    const target = relative(SRC, resolve(join(SRC, 'core'), sample.match(/'([^']+)'/)![1]!));
    expect(ORDER.indexOf(layerOf(target))).toBeGreaterThan(ORDER.indexOf('core'));
  });
});
