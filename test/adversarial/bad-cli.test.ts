/**
 * Bad command lines through the built CLI: glob text that used to become a RegExp, numbers written in other
 * bases, empty values from unset shell variables, shapes that cannot be, names that do not exist. Each must
 * end promptly with one `error:` line saying what and where, one `hint:` line, and the documented exit
 * status (2 for usage, 3 for no GPU), never a stack trace, a hang or a silent success.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { expectNoEscape, expectNoHang, expectNoStackTrace, gpumem, tempDir, type CliResult } from './harness.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/doctor-example.ndjson', import.meta.url));
/** Alice's torchrun job (launcher 41200, ranks 41210 and 41211) and bob's notebook: two users to select by. */
const SYNTHETIC = fileURLToPath(new URL('../fixtures/recordings/synthetic-two-h100.ndjson', import.meta.url));
const tmp = tempDir('gpumem-adv-cli-');
afterAll(tmp.remove);
// History and settings go to the temporary folder, never the user's own.
const env = { XDG_DATA_HOME: tmp.dir, XDG_CONFIG_HOME: tmp.dir };

const OOM = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.00 GiB is free.\n';

/** One error line, one hint line, nothing else on stderr, the given status, no stack and no hang. */
function expectUsageError(r: CliResult, what: string, message: RegExp, code = 2): string {
  expectNoHang(r, what);
  expectNoStackTrace(r, what);
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, `${what}: stderr`).toHaveLength(2);
  expect(lines[0], `${what}: error line`).toMatch(/^gpumem: error: /);
  expect(lines[0], `${what}: error line`).toMatch(message);
  expect(lines[1], `${what}: hint line`).toMatch(/^hint: \S/);
  expect(r.code, `${what}: exit status (stderr: ${r.stderr})`).toBe(code);
  return lines[1] as string;
}

describe('explain: file names and globs', () => {
  const dir = join(tmp.dir, 'logs');
  mkdirSync(dir);
  writeFileSync(join(dir, 'log[1].txt'), OOM);
  writeFileSync(join(dir, `${'a'.repeat(59)}c`), 'no oom here\n');

  it("'[' is a pattern that matches nothing, not a crash", async () => {
    const r = await gpumem(['explain', '['], { cwd: dir, env });
    expectUsageError(r, "explain '['", /^gpumem: error: \[: no file matches$/);
  });

  it('a real file named log[1].txt is read as it is', async () => {
    const r = await gpumem(['explain', 'log[1].txt'], { cwd: dir, env });
    expectNoStackTrace(r, 'explain log[1].txt');
    expect(r.stdout).toMatch(/OOM 1\/1 {2}log\[1\]\.txt:1/);
    expect(r.code).toBe(1);
  });

  it('an escaped bracket matches the file too', async () => {
    const r = await gpumem(['explain', join(dir, 'log\\[1].txt')], { env });
    expect(r.stdout).toMatch(/OOM 1\/1 /);
    expect(r.code).toBe(1);
  });

  it('many stars against a long name end at once (no backtracking)', async () => {
    const r = await gpumem(['explain', `${dir}/${'*a'.repeat(14)}*b`], { env, timeoutMs: 10_000 });
    expectUsageError(r, 'explain *a*a…*b', /no file matches$/);
  });

  it('regex characters in a pattern are plain characters', async () => {
    const r = await gpumem(['explain', join(dir, 'log(1*')], { env });
    expectUsageError(r, 'explain log(1*', /log\(1\*: no file matches$/);
  });

  it('an empty file argument is refused', async () => {
    const r = await gpumem(['explain', ''], { cwd: dir, env });
    expectUsageError(r, "explain ''", /argument 1 is empty/);
  });
});

describe('explain: sizes are read whole or said to be unreadable', () => {
  it('"1e308 GiB" and "-5 GiB" are n/a with the printed text, never 308 GiB or 5 GiB', async () => {
    const log = join(tmp.dir, 'huge.log');
    // A piece of a v1 message: the old reader took "308 GiB" and "5 GiB" from it and called them exact.
    writeFileSync(log, '1e308 GiB total capacity; -5 GiB already allocated; 1.00 GiB free; 4.00 GiB reserved in total by PyTorch)\n');
    const text = await gpumem(['explain', log], { env });
    expectNoStackTrace(text, 'explain huge numbers');
    expect(text.stdout).not.toMatch(/308\.00 GiB|\b5\.00 GiB/);
    expect(text.stdout).toMatch(/totalBytes: n\/a \(printed as "1e308 GiB"/);
    expect(text.stdout).toMatch(/allocatedByPytorchBytes: n\/a \(printed as "-5 GiB"/);
    const json = await gpumem(['explain', log, '--json'], { env });
    const event = (JSON.parse(json.stdout) as { events: Array<Record<string, unknown>> }).events[0] as Record<string, unknown>;
    expect(event.totalBytes).toBeNull();
    expect(event.allocatedByPytorchBytes).toBeNull();
    expect(event.freeBytes).toBe(2 ** 30);
  });
});

describe('numbers are decimal', () => {
  const cases: Array<[string, string[], RegExp, RegExp]> = [
    ['runs --limit 0x40', ['runs', '--limit', '0x40'], /--limit: "0x40" is not a decimal number/, /--limit 64$/],
    ['runs --limit 0b101', ['runs', '--limit', '0b101'], /--limit: "0b101" is not a decimal number/, /--limit 5$/],
    ['status --interval 0x40', ['status', '--watch', '--interval', '0x40', '--replay', EXAMPLE], /--interval: "0x40" is not a decimal number/, /--interval 64$/],
    ['watch --speed 0o2', ['watch', '--speed', '0o2', '--replay', EXAMPLE], /--speed: "0o2" is not a decimal number/, /--speed 2$/],
    ['estimate --batch " 8"', ['estimate', '--params', '7B', '--batch', ' 8'], /--batch: " 8" is not a number/, /--batch \d/],
  ];
  for (const [name, args, message, hint] of cases) {
    it(`${name}: refused, exit 2`, async () => {
      const r = await gpumem(args, { env });
      expect(expectUsageError(r, name, message)).toMatch(hint);
    });
  }

  it('a hint never suggests the value it refused (--memory-fraction 0)', async () => {
    const r = await gpumem(['run', '--memory-fraction', '0', '--', 'true'], { env });
    const hint = expectUsageError(r, '--memory-fraction 0', /--memory-fraction: 0 is not a fraction in \(0, 1\]/);
    expect(hint).not.toMatch(/--memory-fraction 0$/);
    expect(hint).toMatch(/--memory-fraction 0\.\d+$/);
  });
});

describe('empty values from unset variables', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ["--replay ''", ['status', '--replay', ''], /^gpumem: error: --replay: the value is empty$/],
    ["--nvml-lib ''", ['status', '--nvml-lib', ''], /--nvml-lib: the value is empty$/],
    ["--python ''", ['estimate', '--entry', 'a:b', '--python', ''], /--python: the value is empty$/],
    ["snapshot ''", ['snapshot', ''], /argument 1 is empty/],
    ["kill --user ''", ['kill', '--user', '', '--dry-run', '--replay', EXAMPLE], /--user: the value is empty$/],
    ["runs --db ''", ['runs', '--db', ''], /--db: the value is empty$/],
  ];
  for (const [name, args, message] of cases) {
    it(`${name}: one clear line, exit 2`, async () => {
      expectUsageError(await gpumem(args, { env }), name, message);
    });
  }
});

describe('the command after --', () => {
  it('none at all: the hint shows where it goes', async () => {
    const r = await gpumem(['run', '--gpus', '0'], { env });
    expect(expectUsageError(r, 'run without a command', /no command to run$/)).toMatch(/ -- python train\.py/);
  });

  it('an empty program name ends at once with exit 2 (it used to hang after the pre-flight)', async () => {
    const r = await gpumem(['run', '--replay', EXAMPLE, '--', ''], { env, timeoutMs: 10_000 });
    expectNoHang(r, "run -- ''");
    expectNoStackTrace(r, "run -- ''");
    expect(r.stderr).toMatch(/gpumem: error: the command after -- starts with an empty program name/);
    expect(r.code).toBe(2);
  });

  it("estimate -- '': a usage error, not a stack trace", async () => {
    const r = await gpumem(['estimate', '--', ''], { env });
    expectUsageError(r, "estimate -- ''", /the command after -- starts with an empty program name/);
  });
});

describe('control characters in what was typed are shown escaped', () => {
  const cases: Array<[string, string[]]> = [
    ['an unknown option', ['status', '--\u001b[31mred']],
    ['an unknown command', ['\u001b]52;c;aGk=\u0007']],
    ['help for an unknown command', ['help', '\u001b[2J']],
    ['a number option', ['runs', '--limit', '\u001b[31m1']],
    ['a choice option', ['status', '--source', '\u202envml']],
    ['a pid', ['kill', '\u001b[31m1', '--dry-run']],
    ['a command after -- where none is run', ['status', '--', '\u001b[31m']],
  ];
  for (const [name, args] of cases) {
    it(`${name}: exit 2, escaped`, async () => {
      const r = await gpumem(args, { env });
      expectNoEscape(r.stderr, name);
      expect(r.code).toBe(2);
    });
  }
});

describe('names that do not exist', () => {
  it('help nosuch: unknown command, exit 2', async () => {
    const r = await gpumem(['help', 'nosuch'], { env });
    expect(r.stdout).toBe('');
    expectUsageError(r, 'help nosuch', /unknown command "nosuch"/);
  });

  it('help run still shows the command help', async () => {
    const r = await gpumem(['help', 'run'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: gpumem run/);
  });

  it('kill --user nosuchuser: no such user, exit 2', async () => {
    const r = await gpumem(['kill', '--user', 'nosuchuser', '--dry-run', '--replay', EXAMPLE], { env });
    expectUsageError(r, 'kill --user nosuchuser', /--user: no user "nosuchuser"/);
  });

  for (const pid of ['99999999999999999999', '4194305', '0']) {
    it(`kill ${pid}: not a pid (it was shown rounded, or looked up as a process), exit 2`, async () => {
      const r = await gpumem(['kill', pid, '--dry-run', '--replay', EXAMPLE], { env });
      expectUsageError(r, `kill ${pid}`, new RegExp(`"${pid}" is not a pid \\(pids run from 1 to 4194304\\)`));
    });
  }

  it('kill --user of a user in the recording still selects', async () => {
    const r = await gpumem(['kill', '--user', 'alice', '--dry-run', '--replay', SYNTHETIC], { env });
    expect(r.stdout).toMatch(/41210/);
    expect(r.code).toBe(0);
  });
});

describe('model shapes that cannot be', () => {
  const shape = ['estimate', '--params', '7B', '--layers', '32', '--hidden', '4096'];
  it('--heads that do not divide --hidden', async () => {
    const r = await gpumem([...shape, '--heads', '3'], { env });
    expect(expectUsageError(r, '--heads 3', /--heads 3 does not divide --hidden 4096/)).toMatch(/--heads \d+$/);
  });

  it('--kv-heads that do not divide --heads', async () => {
    const r = await gpumem([...shape, '--heads', '32', '--kv-heads', '5'], { env });
    expect(expectUsageError(r, '--kv-heads 5', /--kv-heads 5 does not divide --heads 32/)).toMatch(/--kv-heads 4$/);
  });

  it('--heads without --layers and --hidden is refused, not dropped', async () => {
    const r = await gpumem(['estimate', '--params', '7B', '--heads', '3'], { env });
    expectUsageError(r, '--heads alone', /--heads shapes the model, which needs --layers and --hidden too/);
  });

  it('a shape that divides is still estimated', async () => {
    const r = await gpumem([...shape, '--heads', '32', '--kv-heads', '8'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^model /);
  });
});

describe('no GPU at all', () => {
  it('one short line naming what was tried, a hint, exit 3', async () => {
    const r = await gpumem(['status'], { env: { ...env, PATH: '/nonexistent' } });
    expectUsageError(r, 'status without a GPU', /^gpumem: error: no GPU access: NVML library "\/nonexistent\/libnvidia-ml\.so\.1": No such file or directory; nvidia-smi not found on PATH$/, 3);
  });
});

describe('explain given a file that is not a log', () => {
  it('a gpumem recording: says what it is and what reads it (it was a silent "none found")', async () => {
    const r = await gpumem(['explain', EXAMPLE], { env });
    expectNoStackTrace(r, 'explain on a recording');
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`gpumem: ${EXAMPLE} is a gpumem recording, not a log: it holds GPU samples (read it with gpumem doctor --replay FILE)\n`);
  });
});
