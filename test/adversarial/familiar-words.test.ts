/**
 * A new user's first commands are the verbs of the scripts they come from (`gpu_memory_manager.py --info
 * --clear --monitor --suggest-batch-size --kill-processes`, `memory_utils.py info|clear|reset|fraction|enable`,
 * `memory_profiler.py --find-optimal`). Through the built CLI: the words that mean a gpumem command run it;
 * the others end promptly with one `error:` line saying what gpumem does instead, one `hint:` line naming
 * the command to run, and exit 2 — never "unknown command" and nothing more.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expectNoHang, expectNoStackTrace, gpumem, type CliResult } from './harness.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/doctor-example.ndjson', import.meta.url));

function expectAnswer(r: CliResult, what: string, hint: RegExp): void {
  expectNoHang(r, what);
  expectNoStackTrace(r, what);
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, `${what}: stderr`).toHaveLength(2);
  expect(lines[0], `${what}: error line`).toMatch(/^gpumem: error: ".+" is not a gpumem command: \S/);
  expect(lines[0], `${what}: error line`).not.toMatch(/unknown command/);
  expect(lines[1], `${what}: hint line`).toMatch(/^hint: /);
  expect(lines[1], `${what}: hint line`).toMatch(hint);
  expect(r.stdout, `${what}: stdout`).toBe('');
  expect(r.code, `${what}: exit status`).toBe(2);
}

describe('words that mean a gpumem command run it', () => {
  for (const word of ['info', '--info']) {
    it(`gpumem ${word} is gpumem status`, async () => {
      const [aliased, status] = await Promise.all([gpumem([word, '--replay', EXAMPLE]), gpumem(['status', '--replay', EXAMPLE])]);
      expectNoStackTrace(aliased, word);
      expect(aliased.code, aliased.stderr).toBe(0);
      expect(aliased.stdout).toBe(status.stdout);
      expect(aliased.stdout).toMatch(/NVIDIA H100/);
    });
  }

  for (const word of ['monitor', '--monitor']) {
    it(`gpumem ${word} is gpumem watch (which needs a terminal)`, async () => {
      const r = await gpumem([word, '--replay', EXAMPLE]);
      expectNoStackTrace(r, word);
      expect(r.stderr).toMatch(/terminal/);
      expect(r.stderr).not.toMatch(/unknown command/);
      expect(r.code).toBe(2);
    });
  }

  it('help names the alias and gpumem help info shows status', async () => {
    const [main, info] = await Promise.all([gpumem(['--help']), gpumem(['help', 'info'])]);
    expect(main.stdout).toMatch(/status .*\(also: info\)/);
    expect(main.stdout).toMatch(/watch .*\(also: monitor\)/);
    expect(info.stdout).toMatch(/^Usage: gpumem status/);
    expect(info.stdout).toMatch(/Also: gpumem info/);
  });
});

describe('words of other tools answer with the command that does the job', () => {
  const cases: Array<[string[], RegExp, RegExp]> = [
    [['clear'], /another process's PyTorch cache/, /gpumem kill --orphans.*torch\.cuda\.empty_cache\(\)/],
    [['--clear'], /only the process itself/, /gpumem doctor/],
    [['--suggest-batch-size'], /gpumem estimate.*gpumem fit/, /gpumem estimate --gpu .*gpumem fit --/],
    [['--find-optimal'], /largest batch/, /gpumem fit/],
    [['kill-processes'], /gpumem kill/, /gpumem kill --gpu 0 --orphans --dry-run/],
    [['--kill-processes'], /gpumem kill/, /gpumem kill PID/],
    [['reset'], /reset_peak_memory_stats/, /gpumem kill --orphans/],
    [['fraction'], /set_per_process_memory_fraction/, /gpumem estimate/],
    [['enable'], /expandable segments/, /gpumem run/],
    [['clear', '--gpu', '0'], /PyTorch cache/, /gpumem kill/],
  ];
  for (const [argv, error, hint] of cases) {
    it(`gpumem ${argv.join(' ')}`, async () => {
      const r = await gpumem(argv);
      expectAnswer(r, `gpumem ${argv.join(' ')}`, hint);
      expect(r.stderr.split('\n')[0]).toMatch(error);
    });
  }

  it('gpumem help clear answers the same way', async () => {
    expectAnswer(await gpumem(['help', 'clear']), 'gpumem help clear', /gpumem kill/);
  });

  it('a word nobody uses is still an unknown command', async () => {
    const r = await gpumem(['frobnicate']);
    expect(r.stderr).toMatch(/^gpumem: error: unknown command "frobnicate"/);
    expect(r.code).toBe(2);
  });
});
