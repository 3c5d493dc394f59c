/**
 * A full disk under gpumem's own output. A command that only prints ends with one error line and exit 1, never
 * a stack; a supervised run goes on: the training finishes, gpumem says once (on the stream that still works)
 * that its output stopped, and returns the child's status. /dev/full answers every write with ENOSPC; a file
 * size limit (EFBIG) stands in for a disk that fills in the middle of a run. Also here: the 128+n exit status
 * for signals above 15.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expectNoStackTrace, type CliResult } from './harness.js';
import { BIN, node, world, type World } from './supervise-helpers.js';

const ROOT = resolve(__dirname, '../..');
const EXAMPLE = join(ROOT, 'examples/doctor-example.ndjson');
const OOM_LOG = join(ROOT, 'test/fixtures/oom/train-sample.txt');
const SNAPSHOT = join(ROOT, 'test/fixtures/snapshot/real/constructor_memory_snapshot.pickle');

let w: World | null = null;
afterEach(() => {
  w?.remove();
  w = null;
});

/** Runs `gpumem ARGS` through a shell so its streams can be redirected; `redirect` is shell text. */
function shell(args: string[], redirect: string, env: Record<string, string> = {}, prefix = ''): CliResult {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = spawnSync('sh', ['-c', `${prefix}${quoted} ${redirect}`], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', GPUMEM_NVML_LIB: '/nonexistent/libnvidia-ml.so.1', ...env },
    encoding: 'utf8', timeout: 30000,
  });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, timedOut: r.error !== undefined, peakRssBytes: 0 };
}

describe('gpumem printing to a full disk', () => {
  const commands: Array<[string, string[]]> = [
    ['--help', ['--help']],
    ['status', ['status', '--replay', EXAMPLE]],
    ['status --json', ['status', '--json', '--replay', EXAMPLE]],
    ['doctor', ['doctor', '--replay', EXAMPLE]],
    ['explain', ['explain', OOM_LOG]],
    ['snapshot', ['snapshot', SNAPSHOT]],
    ['estimate', ['estimate', '--params', '1B', '--batch', '4', '--seq', '512']],
  ];
  for (const [name, args] of commands) {
    it(`${name} > /dev/full: one error line and its hint, exit 1`, () => {
      const r = shell(args, '> /dev/full');
      expectNoStackTrace(r, `gpumem ${name} > /dev/full`);
      expect(r.stderr).toBe('gpumem: error: cannot write to standard output: ENOSPC: no space left on the device\nhint: free space where the output goes (or send it elsewhere) and run the command again\n');
      expect(r.code).toBe(1);
    });
  }

  it('runs with stderr on /dev/full: stdout still carries the answer, exit as without the fault', () => {
    const r = shell(['status', '--replay', EXAMPLE], '2> /dev/full');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('H100');
  });
});

describe('a supervised run whose log disk is full goes on', () => {
  it('stdout on /dev/full: the training finishes, gpumem says so once on stderr and returns its status', () => {
    w = world();
    const done = join(w.dir, 'done');
    const r = shell(['run', '--no-history', '--no-companion', '--', ...node('chatty.mjs', '--lines', '30', '--every-ms', '10', '--done', done, '--exit', '7')], '> /dev/full', w.env);
    expectNoStackTrace(r, 'gpumem run > /dev/full');
    expect(existsSync(done)).toBe(true);
    expect(r.code).toBe(7);
    expect(r.stderr.match(/writing to standard output failed \(ENOSPC: no space left on the device\); the run goes on/g)).toHaveLength(1);
    expect(r.stderr).toContain('gpumem run: exit 7');
  });

  it('stderr on /dev/full: said once on stdout, the status is the child\'s', () => {
    w = world();
    const done = join(w.dir, 'done');
    const r = shell(['run', '--no-history', '--no-companion', '--', ...node('chatty.mjs', '--lines', '5', '--every-ms', '10', '--done', done, '--exit', '4')], '2> /dev/full', w.env);
    expectNoStackTrace(r, 'gpumem run 2> /dev/full');
    expect(existsSync(done)).toBe(true);
    expect(r.code).toBe(4);
    expect(r.stdout.match(/writing to standard error failed \(ENOSPC/g)).toHaveLength(1);
    expect(r.stdout).toContain('line 4');
  });

  it('a log file that stops growing in the middle of the run (EFBIG): the run still ends on its own with its status', () => {
    w = world();
    const done = join(w.dir, 'done');
    const log = join(w.dir, 'log.txt');
    // ulimit -f counts 512-byte blocks: the log may grow to 64 KiB; the child prints 30 lines of 1 KiB, then 16 MiB.
    const r = shell(['run', '--no-history', '--no-companion', '--', ...node('chatty.mjs', '--mb', '16', '--done', done, '--exit', '0')], `> '${log}' 2>&1`, w.env, 'ulimit -f 128; ');
    expect(existsSync(done)).toBe(true);
    expect(r.code).toBe(0);
    expect(statSync(log).size).toBeLessThanOrEqual(64 * 1024);
    const text = readFileSync(log, 'utf8');
    expect(text).not.toMatch(/internal error|\n\s+at /);
  });
});

describe('exit status 128+n for every signal', () => {
  for (const [sig, n] of [['XCPU', 24], ['SYS', 31], ['PWR', 30], ['TERM', 15]] as const) {
    it(`a command killed by SIG${sig} gives ${128 + n}`, () => {
      w = world();
      const r = shell(['run', '--no-history', '--no-companion', '--', 'sh', '-c', `kill -${sig} $$`], '', w.env);
      expect(r.code).toBe(128 + n);
      w.remove();
      w = null;
    });
  }
});
