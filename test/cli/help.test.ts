import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/cli/args.js';
import { HANDLERS } from '../../src/cli/commands/index.js';
import { commandHelp, docsMarkdown, mainHelp } from '../../src/cli/help.js';
import { COMMANDS, findCommand } from '../../src/cli/table.js';
import { GpumemError } from '../../src/core/index.js';

describe('options table', () => {
  it('every command in the table has a handler and vice versa', () => {
    expect(Object.keys(HANDLERS).sort()).toEqual(COMMANDS.map((c) => c.name).sort());
  });

  it('help lists every option of every command', () => {
    for (const c of COMMANDS) {
      const help = commandHelp(c);
      for (const o of c.options) expect(help).toContain(`--${o.name}`);
    }
    expect(mainHelp('0.0.0')).toContain('doctor');
  });

  it('docs/cli.md is generated from the table (run npm run docs)', () => {
    const onDisk = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
    expect(onDisk).toBe(docsMarkdown());
  });
});

describe('parseArgs', () => {
  const status = findCommand('status')!;
  it('reads flags, values and negations', () => {
    const a = parseArgs(status, ['--json', '--source=smi', '--no-color']);
    expect(a.options).toMatchObject({ json: true, source: 'smi', noColor: true });
  });
  it('applies defaults', () => {
    expect(parseArgs(status, []).options.source).toBe('auto');
  });
  it('refuses unknown options and bad choices with a usage error', () => {
    expect(() => parseArgs(status, ['--jsn'])).toThrow(GpumemError);
    expect(() => parseArgs(status, ['--source', 'magic'])).toThrow(/not one of/);
    expect(() => parseArgs(status, ['--replay'])).toThrow(/needs a value/);
  });
  it('refuses a child command for commands that do not run one', () => {
    expect(() => parseArgs(status, ['--', 'python', 'x.py'])).toThrow(/does not run a command/);
  });
});
