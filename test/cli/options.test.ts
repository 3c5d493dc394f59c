/**
 * The rules of the options table: out-of-range values are usage errors (exit 2, one line naming the flag)
 * before anything starts, the help shows the real limits, and help lines fit the terminal.
 */
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/cli/args.js';
import { commandHelp } from '../../src/cli/help.js';
import { COMMANDS, findCommand } from '../../src/cli/table.js';
import { gpumemInProcess } from '../helpers/cli.js';

const refused = async (argv: string[], message: RegExp): Promise<void> => {
  const r = await gpumemInProcess(argv, { env: { XDG_DATA_HOME: '/nonexistent/gpumem-test' } });
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toMatch(message);
  expect(r.stderr.trim().split('\n')).toHaveLength(2);
  expect(r.stdout).toBe('');
};

describe('number rules', () => {
  it('a time beyond what a timer can hold is a usage error, not an instant SIGKILL', async () => {
    await refused(['run', '--grace-ms', '3000000000', '--', 'true'], /--grace-ms: "3000000000" must be a whole number between 0 and 86400000/);
    await refused(['kill', '--grace-ms', '3000000000', '1'], /--grace-ms/);
    await refused(['status', '--watch', '--interval', '1e12'], /--interval/);
    await refused(['record', '--out', '/dev/null', '--interval', '5'], /--interval: "5" must be a whole number between 10/);
  });

  it('an integer beyond 2^53 is refused instead of silently rounded', async () => {
    await refused(['run', '--batch', '9007199254740993', '--', 'true'], /--batch: "9007199254740993" is too large/);
    await refused(['runs', '--limit', '99999999999999999999'], /--limit: "99999999999999999999" is too large/);
    await refused(['estimate', '--params', '7B', '--batch', '9007199254740993'], /--batch/);
  });

  it('fractions, percentages and ranges name what they are', async () => {
    await refused(['run', '--memory-fraction', '1.5', '--', 'true'], /--memory-fraction: 1.5 is not a fraction in \(0, 1\]/);
    await refused(['run', '--companion-rate', '101', '--', 'true'], /--companion-rate: 101 is not a rate per second between 0 and 100/);
    await refused(['doctor', '--window', '-1'], /--window: -1 is not a number of seconds between 0 and 3600/);
    await refused(['estimate', '--params', '7B', '--margin', '100'], /--margin: 100 is not a percentage in \[0, 100\)/);
    await refused(['fit', '--fill', '0', '--', 'x', '{batch}'], /--fill: 0 is not a percentage in \(0, 100\]/);
    await refused(['snapshot', 'x.pickle', '--top', '2.5'], /--top: "2.5" must be a whole number of at least 1/);
  });

  it('a transform turns text into the handler\'s value, and its error is a usage error', async () => {
    const fit = findCommand('fit')!;
    expect(parseArgs(fit, ['--probe', '3', '--probe', '8', '--', 'x']).options.probe).toEqual([3, 8]);
    expect(parseArgs(fit, ['--', 'x']).options.probe).toBeUndefined();
    await refused(['fit', '--probe', '4,2', '--', 'x', '{batch}'], /--probe: "4,2" is not two ascending batch sizes/);
  });

  it('defaults are applied once, typed: numbers, bytes and absent flags', () => {
    const o = parseArgs(findCommand('pipeline')!, ['p.yaml']).options;
    expect(o).toMatchObject({ tolerance: 256 * 1024 * 1024, companionRate: 10, noCompanion: false, json: false, source: 'auto' });
    expect(o.memoryFraction).toBeUndefined();
  });
});

describe('help shows the rules and fits the terminal', () => {
  it('every number option with a rule shows it in help', () => {
    for (const c of COMMANDS) {
      const help = commandHelp(c, 200);
      for (const o of c.options) {
        if (o.type !== 'number') continue;
        if (o.min !== undefined) expect(help, `${c.name} --${o.name}`).toContain(String(o.min));
        if (o.max !== undefined) expect(help, `${c.name} --${o.name}`).toContain(String(o.max));
      }
    }
    expect(commandHelp(findCommand('run')!, 400)).toContain('whole number, 0 ≤ MS ≤ 86400000; default: 5000');
  });

  it('wraps every line to the terminal width', async () => {
    for (const columns of [60, 80, 120]) {
      const r = await gpumemInProcess(['estimate', '--help'], { columns });
      expect(r.code).toBe(0);
      // Examples stay whole so they can be copied and pasted; a single word longer than the line stays whole.
      const long = r.stdout.split('\n').filter((l) => l.length >= columns && !l.startsWith('  gpumem ') && l.trim().includes(' '));
      expect(long, `at ${columns} columns`).toEqual([]);
      expect(r.stdout).toContain('--activation-bytes-per-sample');
    }
  });
});
