/**
 * Names from files the user was handed, printed while gpumem works: a pipeline's name, stage names and
 * commands (printed as the stages run and in the summary, not only by --check), and a config.json's
 * model_type in estimate's error line. Each prints escaped, never as raw terminal bytes.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expectNoEscape } from './harness.js';
import { expectClean, gpumem, type World, world } from './supervise-helpers.js';

const EVIL = '\u001b]0;pwned\u0007\u001b[2J\u202eevil';
let w: World | null = null;
afterEach(() => {
  w?.remove();
  w = null;
});

describe('names from files print escaped', () => {
  it('pipeline FILE: the pipeline name, stage names and commands', async () => {
    w = world();
    const file = join(w.dir, 'evil.yaml');
    const q = (s: string): string => JSON.stringify(s);
    writeFileSync(file, [
      `name: ${q(`pipe${EVIL}`)}`,
      'gpus: "1"',
      'stages:',
      `  - name: ${q(`train${EVIL}`)}`,
      `    command: [${q(process.execPath)}, "-e", "0", ${q(`arg${EVIL}`)}]`,
      '',
    ].join('\n'));
    const r = await gpumem(['pipeline', '--no-history', '--no-companion', file], w.env, 30000);
    expectClean(r, 'pipeline with hostile names');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('\\e]0;pwned\\x07');
    expectNoEscape(r.stderr, 'pipeline progress and summary');
    expectNoEscape(r.stdout, 'pipeline stdout');
  }, 40000);

  it('estimate config.json: model_type in the error line', async () => {
    w = world();
    const config = join(w.dir, 'config.json');
    writeFileSync(config, JSON.stringify({ model_type: `\u001b[31mevil${EVIL}`, hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 2, vocab_size: 100 }));
    const r = await gpumem(['estimate', config], w.env);
    expectClean(r, 'estimate with a hostile model_type');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('model_type "\\e[31mevil');
    expectNoEscape(r.stderr, 'estimate error line');
  });
});
