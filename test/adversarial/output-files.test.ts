/**
 * Files gpumem writes, through the built CLI: a symbolic link another user planted in sticky /tmp is refused
 * (root must not overwrite its own 0600 file through it, X001/X002), an output that names an input is
 * refused before anything is written (C102–C104), and a path option never swallows the next option as its
 * file name (`--html --json`, `--db --`).
 */
import { chmodSync, copyFileSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DIR } from '../core/snapshot/fixtures.js';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { asUser, expectNoHang, expectNoStackTrace, gpumem, secondUser, tempDir, type CliResult } from './harness.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/doctor-example.ndjson', import.meta.url));
const SNAPSHOT = `${DIR}/current-p5.pickle`;
const tmp = tempDir('gpumem-adv-out-');
afterAll(tmp.remove);

/** Exit 2 with exactly one error line and one hint line: the shape of every refusal. */
function expectRefused(r: CliResult, what: string, message: RegExp): void {
  expectNoHang(r, what);
  expectNoStackTrace(r, what);
  expect(r.stderr).toMatch(message);
  expect(r.stderr.match(/^gpumem: error: /gm), r.stderr).toHaveLength(1);
  expect(r.stderr).toMatch(/^hint: /m);
  expect(r.code).toBe(2);
}

/** Fails with "ESCAPE" when a file another user pointed us at was changed. */
function expectUntouched(path: string, content: string, what: string): void {
  const now = readFileSync(path, 'utf8');
  if (now !== content) throw new Error(`ESCAPE: ${what}: ${path} was overwritten through a planted link (${now.length} bytes now)`);
}

/** Fails with "LOST RECORD" when the command destroyed the file it was reading. */
function expectInputKept(path: string, bytes: Buffer, what: string): void {
  if (!readFileSync(path).equals(bytes)) throw new Error(`LOST RECORD: ${what}: the input ${path} was overwritten`);
}

const other = secondUser();
afterAll(other.remove);
describe.skipIf(!other.user)(`a link planted by another user in sticky /tmp${other.user ? '' : ` (skipped: ${other.reason})`}`, () => {
  // root's secret in a folder only root can enter; the other user can still name it in a link.
  chmodSync(tmp.dir, 0o755);
  const secretDir = join(tmp.dir, 'root-only');
  mkdirSync(secretDir, { mode: 0o700 });
  const secret = join(secretDir, 'secret');
  writeFileSync(secret, 'root secret\n', { mode: 0o600 });
  const sticky = join(tmp.dir, 'sticky');
  mkdirSync(sticky);
  chmodSync(sticky, 0o1777);

  function plant(name: string): string {
    const link = join(sticky, name);
    asUser(other.user!, `ln -s '${secret}' '${link}'`);
    expect(lstatSync(link).uid).toBe(other.user!.uid);
    return link;
  }

  it('X001: snapshot --html through the link is refused; the 0600 file stays as it was', async () => {
    const link = plant('report.html');
    const r = await gpumem(['snapshot', SNAPSHOT, '--html', link]);
    expectUntouched(secret, 'root secret\n', 'snapshot --html');
    expectRefused(r, 'snapshot --html to a planted link', /^gpumem: error: --html: refusing to write .*report\.html: it is a symbolic link to .*secret \(owned by uid \d+\)$/m);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readdirSync(sticky).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('X002: record --out through the link is refused; the 0600 file stays as it was', async () => {
    const link = plant('rec.ndjson');
    const r = await gpumem(['record', '--replay', EXAMPLE, '--out', link, '--interval', '50', '--duration', '1']);
    expectUntouched(secret, 'root secret\n', 'record --out');
    expectRefused(r, 'record --out to a planted link', /^gpumem: error: --out: refusing to write .*rec\.ndjson: it is a symbolic link/m);
  });

  it('record --out over another user\'s regular file in sticky /tmp is refused, and the file is kept', async () => {
    const theirs = join(sticky, 'theirs.ndjson');
    asUser(other.user!, `printf 'their data' > '${theirs}'`);
    const r = await gpumem(['record', '--replay', EXAMPLE, '--out', theirs, '--interval', '50', '--duration', '1']);
    expectRefused(r, 'record --out over another user\'s file', /refusing to write .*theirs\.ndjson: it belongs to uid \d+, not to uid 0/);
    expect(readFileSync(theirs, 'utf8')).toBe('their data');
  });

  it('run --snapshot-on-oom with the history in sticky /tmp: a planted runs link gets a warning, the job runs, nothing lands where it points', async () => {
    const scenario = join(tmp.dir, 'scenario.txt');
    writeScenario(scenario, { driverVersion: '590.44.01', cudaVersion: 13010, devices: [fakeH100(0)] });
    const theirs = join(tmp.dir, 'their-folder');
    mkdirSync(theirs);
    chmodSync(theirs, 0o777);
    asUser(other.user!, `ln -s '${theirs}' '${join(sticky, 'runs')}'`);
    const r = await gpumem(['run', '--snapshot-on-oom', '--interval-ms', '20', '--cleanup-timeout-ms', '200', '--db', join(sticky, 'h.db'), '--', process.execPath, '-e', 'process.exit(4)'], { env: fakeNvmlEnv('590', scenario), timeoutMs: 30_000 });
    expectNoHang(r, 'run with a planted runs link');
    expectNoStackTrace(r, 'run with a planted runs link');
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/warning: cannot create the run folder .*: refusing to use .*sticky\/runs: it is a symbolic link; running without --snapshot-on-oom/);
    expect(readdirSync(theirs)).toEqual([]);
  });

  it('--db naming another user\'s link is refused before anything is written', async () => {
    const link = plant('history.db');
    const r = await gpumem(['runs', '--db', link]);
    expectUntouched(secret, 'root secret\n', 'runs --db');
    expectRefused(r, 'runs --db to a planted link', /refusing to open the run history at .*history\.db: it is a symbolic link owned by uid \d+/);
  });
});

describe('an output that names an input is refused, and the input kept', () => {
  it('C102: snapshot oom.pickle --html oom.pickle (also spelled ./oom.pickle, or a hard link to it)', async () => {
    const dir = join(tmp.dir, 'c102');
    mkdirSync(dir);
    const input = join(dir, 'oom.pickle');
    copyFileSync(SNAPSHOT, input);
    const bytes = readFileSync(input);
    linkSync(input, join(dir, 'same.html'));
    for (const out of ['oom.pickle', './oom.pickle', input, 'same.html']) {
      const r = await gpumem(['snapshot', 'oom.pickle', '--html', out], { cwd: dir });
      expectInputKept(input, bytes, `snapshot --html ${out}`);
      expectRefused(r, `snapshot --html ${out}`, /^gpumem: error: --html: .*(oom\.pickle|same\.html) is a file this command reads/m);
    }
  });

  it('C103: record --replay r.ndjson --out r.ndjson', async () => {
    const dir = join(tmp.dir, 'c103');
    mkdirSync(dir);
    const input = join(dir, 'r.ndjson');
    copyFileSync(EXAMPLE, input);
    const bytes = readFileSync(input);
    const r = await gpumem(['record', '--replay', 'r.ndjson', '--out', 'r.ndjson', '--interval', '50', '--duration', '1'], { cwd: dir });
    expectInputKept(input, bytes, 'record --replay r --out r');
    expectRefused(r, 'record --out over its --replay', /^gpumem: error: --out: r\.ndjson is a file this command reads/m);
  });

  it('C104: estimate --html train.py -- python train.py is refused before anything is traced', async () => {
    const dir = join(tmp.dir, 'c104');
    mkdirSync(dir);
    const script = join(dir, 'train.py');
    writeFileSync(script, 'raise SystemExit("the trace must not run")\n');
    const bytes = readFileSync(script);
    for (const [out, cmd] of [['train.py', ['python3', 'train.py']], ['train.py', ['python3', './train.py', '--lr', '1']], ['cfg.yaml', ['python3', 'train.py', '--config=cfg.yaml']]] as const) {
      writeFileSync(join(dir, 'cfg.yaml'), 'lr: 1\n');
      const r = await gpumem(['estimate', '--html', out, '--', ...cmd], { cwd: dir, timeoutMs: 30_000 });
      expectInputKept(script, bytes, `estimate --html ${out}`);
      expectRefused(r, `estimate --html ${out}`, new RegExp(`^gpumem: error: --html: ${out.replace('.', '\\.')} is a file this command reads`, 'm'));
      expect(r.stderr).not.toMatch(/must not run/);
    }
  });
});

describe('a path option does not take the next option as its file name', () => {
  it('snapshot --html --json: refused, no file named "--json" written; --html=-x and ./-x still name such files', async () => {
    const dir = join(tmp.dir, 'dash');
    mkdirSync(dir);
    const r = await gpumem(['snapshot', SNAPSHOT, '--html', '--json'], { cwd: dir });
    expectRefused(r, 'snapshot --html --json', /^gpumem: error: --html needs a file name, but the next argument "--json" looks like an option$/m);
    expect(r.stderr).toMatch(/--html=--json or --html \.\/--json/);
    expect(existsSync(join(dir, '--json'))).toBe(false);
    const inline = await gpumem(['snapshot', SNAPSHOT, '--html=-x.html'], { cwd: dir });
    expect(inline.code, inline.stderr).toBe(0);
    expect(statSync(join(dir, '-x.html')).size).toBeGreaterThan(0);
    const dotted = await gpumem(['snapshot', SNAPSHOT, '--html', './-y.html'], { cwd: dir });
    expect(dotted.code, dotted.stderr).toBe(0);
    expect(existsSync(join(dir, '-y.html'))).toBe(true);
  });

  it('runs --db --: refused instead of swallowing "--"; record -o -: refused', async () => {
    const db = await gpumem(['runs', '--db', '--'], { cwd: tmp.dir });
    expectRefused(db, 'runs --db --', /^gpumem: error: --db needs a file name, but the next argument "--" looks like an option$/m);
    const out = await gpumem(['record', '--replay', EXAMPLE, '-o', '-'], { cwd: tmp.dir });
    expectRefused(out, 'record -o -', /^gpumem: error: -o needs a file name/m);
    expect(existsSync(join(tmp.dir, '-'))).toBe(false);
  });

  it('options whose values are numbers still read a negative number as the value', async () => {
    const r = await gpumem(['estimate', '--params', '1B', '--margin', '-5']);
    expectRefused(r, 'estimate --margin -5', /--margin: -5 is not a percentage/);
  });
});
