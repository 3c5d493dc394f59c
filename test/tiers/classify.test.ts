/**
 * The suite's tiers: a file is sorted by what it reaches through its imports, and the real tree's tiers hold
 * the files they are meant to.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { classifyTests } from './classify.js';

const roots: string[] = [];
afterEach(() => roots.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

// Import lines are built, not written out: this file's own text must not seem to import what they name.
const from = (spec: string): string => `import { x } from '${spec}';\n`;
const later = (spec: string): string => `const m = await import('${spec}');\n`;

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'gpumem-tiers-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('test tiers', () => {
  it('sorts a file by what it reaches through our sources and the helpers, the slowest tier winning', () => {
    const root = tree({
      'src/core/pure.ts': 'export const x = 1;\n',
      'src/supervise/spawner.ts': from('node:child_process'),
      'src/supervise/index.ts': from('./spawner.js'),
      'test/setup/python-venv.ts': 'export const x = 1;\n',
      'test/setup/chromium.ts': 'export const x = 1;\n',
      'test/helpers/runner.ts': from('../../src/supervise/index.js'),
      'test/a/pure.test.ts': from('../../src/core/pure.js'),
      'test/a/spawns.test.ts': from('../helpers/runner.js'),
      'test/a/loads.test.ts': later('koffi'),
      'test/a/traces.test.ts': from('../setup/python-venv.js') + from('../setup/chromium.js'),
      'test/a/page.test.ts': from('../setup/chromium.js') + from('../helpers/runner.js'),
    });
    expect(classifyTests(root)).toEqual({
      unit: ['test/a/pure.test.ts'],
      e2e: ['test/a/loads.test.ts', 'test/a/spawns.test.ts'],
      torch: ['test/a/traces.test.ts'],
      browser: ['test/a/page.test.ts'],
    });
  });

  it('puts the real tree where it belongs: pure analysis in unit, processes in e2e, PyTorch in torch, pages in browser', () => {
    const tiers = classifyTests(resolve(__dirname, '../..'));
    expect(tiers.unit).toEqual(expect.arrayContaining(['test/layers.test.ts', 'test/core/units.test.ts', 'test/core/allocator/replay-real.test.ts', 'test/tiers/classify.test.ts']));
    expect(tiers.e2e).toEqual(expect.arrayContaining(['test/supervise/watchdog.test.ts', 'test/adversarial/supervise-escape.test.ts', 'test/cli/bin-executable.test.ts']));
    expect(tiers.torch).toEqual(expect.arrayContaining(['test/cli/estimate/traced.test.ts', 'test/cli/estimate/traced-old-torch.test.ts']));
    expect(tiers.browser).toEqual(expect.arrayContaining(['test/server/page.test.ts', 'test/server/page-firefox.test.ts']));
    expect(tiers.unit.length).toBeGreaterThan(30);
  });
});
