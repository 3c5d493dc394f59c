/**
 * The architecture, enforced (rules in test/helpers/layer-rules.ts): a layer imports only layers below it,
 * core/ touches nothing of Node's and reads no clock, each outside library enters through its one module,
 * and only cli/ ends the process. Each rule also runs on a small tree that breaks it, so none passes by
 * finding nothing.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exitsOutsideCli, impureCoreCode, impureCoreImports, missingLayers, readTree, ungatedImports, upwardImports } from './helpers/layer-rules.js';

const real = readTree(resolve(__dirname, '../src'));

// The bad tree is written to disk and read back like src/. Its import lines are built, not written out, so this
// file's own text does not seem to import what they name.
const from = (spec: string): string => `import { x } from '${spec}';\n`;
const badDir = mkdtempSync(join(tmpdir(), 'gpumem-layers-'));
afterAll(() => rmSync(badDir, { recursive: true, force: true }));
const badFiles: Record<string, string> = {
  'core/units.ts': from('../cli/main.js') + from('node:fs') + 'export const t = Date.now();\n',
  'core/ok.ts': '/** Date.now() and process.exit(1) in prose are fine. */\nexport const n = 1;\n',
  'sources/nvml/library.ts': from('koffi'),
  'sources/smi/source.ts': from('koffi') + from('../../store/db/open.js'),
  'store/db/open.ts': from('better-sqlite3'),
  'store/db/history.ts': from('better-sqlite3') + 'process.exitCode = 3;\n',
  'supervise/pipeline/parse.ts': from('yaml'),
  'supervise/run.ts': from('yaml/util') + from('../orchestrate/fit-loop.js') + 'process.exit(1);\n',
  'orchestrate/fit-loop.ts': from('left-pad'),
  'server/metrics/exporter.ts': from('prom-client'),
  'server/app.ts': from('prom-client') + from('../cli/main.js'),
  'cli/main.ts': from('../core/units.js') + 'process.exitCode = 2;\nprocess.exit(1);\n',
};
for (const [rel, text] of Object.entries(badFiles)) {
  mkdirSync(dirname(join(badDir, rel)), { recursive: true });
  writeFileSync(join(badDir, rel), text);
}
const bad = readTree(badDir);

describe('layer rules', () => {
  it('finds every layer', () => {
    expect(missingLayers(real)).toEqual([]);
    expect(missingLayers(bad.filter((f) => !f.rel.startsWith('orchestrate/')))).toEqual(['orchestrate']);
  });

  it('no lower layer imports a higher one', () => {
    expect(upwardImports(real)).toEqual([]);
    expect(upwardImports(bad).sort()).toEqual(['core/units.ts → cli/main.js', 'server/app.ts → cli/main.js', 'sources/smi/source.ts → store/db/open.js', 'supervise/run.ts → orchestrate/fit-loop.js']);
  });

  it('core/ imports nothing from node or outside libraries', () => {
    expect(impureCoreImports(real)).toEqual([]);
    expect(impureCoreImports(bad)).toEqual(['core/units.ts: node:fs']);
  });

  it('core/ reads no clock and no environment', () => {
    expect(impureCoreCode(real)).toEqual([]);
    expect(impureCoreCode(bad)).toEqual(['core/units.ts']);
  });

  it('each outside library enters through its one module, and a library without one is refused', () => {
    expect(ungatedImports(real)).toEqual([]);
    expect(ungatedImports(bad).sort()).toEqual([
      'orchestrate/fit-loop.ts imports left-pad, which has no door in GATES',
      'server/app.ts imports prom-client (only server/metrics/exporter.ts may)',
      'sources/smi/source.ts imports koffi (only sources/nvml/ may)',
      'store/db/history.ts imports better-sqlite3 (only store/db/open.ts may)',
      'supervise/run.ts imports yaml/util (only supervise/pipeline/ may)',
    ]);
  });

  it('only cli/ ends the process or sets its exit status', () => {
    expect(exitsOutsideCli(real)).toEqual([]);
    expect(exitsOutsideCli(bad).sort()).toEqual(['store/db/history.ts', 'supervise/run.ts']);
  });
});
