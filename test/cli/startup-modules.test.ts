/**
 * A one-shot command loads what it uses and nothing more (docs/status.md, "Start-up"): `gpumem status` on NVML
 * never loads the recording reader, the nvidia-smi parsers, the run history or the analyses; doctor's first
 * screen never loads SQLite, YAML or the supervisor. Each run records every module Node loads (a module hook
 * given with --import) on the fake libnvidia-ml.so.1 with a real pid. The compiled modules (dist/cli/main.js,
 * as tsc wrote them) show the graph by name; the executable (dist/cli/bin.js) must run from its bundle
 * (dist/cli/gpumem.cjs, read with its code cache), not from those modules: bin.js is the only ES module of
 * gpumem's it loads. The last case proves the hook sees a module that is loaded.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { MiB } from '../../src/core/units.js';
import { BIN } from '../helpers/cli.js';

const ROOT = join(__dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'gpumem-startup-modules-'));
const sleeper = spawn('/bin/sleep', ['60'], { stdio: 'ignore' });
afterAll(() => {
  sleeper.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});
const scenario = join(dir, 'scenario.txt');
writeScenario(scenario, { driverVersion: '590.48.01', cudaVersion: 13010, devices: [fakeH100(0, { processes: [{ pid: sleeper.pid!, usedBytes: 512 * MiB }] })] });

// Writes each loaded URL to the file named by the environment; registered before the program's first module.
const hooks = join(dir, 'hooks.mjs');
writeFileSync(hooks, "import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) { appendFileSync(process.env.MODULES_OUT, url + '\\n'); return next(url, context); }\n");
const register = join(dir, 'register.mjs');
writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);

let runs = 0;
/** Runs `program` (with `args`) and returns the loaded modules: dist files relative to dist/, others as URLs. */
function loadedBy(program: string[], args: string[]): { modules: string[]; stdout: string } {
  const out = join(dir, `modules-${++runs}.txt`);
  writeFileSync(out, '');
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, ...program, ...args], {
    encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH, MODULES_OUT: out, ...fakeNvmlEnv('590', scenario) },
  });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const distUrl = pathToFileURL(join(ROOT, 'dist')).href + '/';
  const modules = readFileSync(out, 'utf8').split('\n').filter(Boolean).map((u) => (u.startsWith(distUrl) ? u.slice(distUrl.length) : u));
  return { modules, stdout: r.stdout };
}

/** main() of the compiled modules, not the bundle: the graph with its module names. */
const compiledMain = (args: string[]): string[] => ['--input-type=module', '-e', `const { main } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/cli/main.js')).href)}); process.exitCode = await main(${JSON.stringify(args)});`];

const under = (modules: string[], prefixes: string[]): string[] => modules.filter((m) => prefixes.some((p) => m.startsWith(p) || m.includes(`/node_modules/${p}`)));

describe('what a one-shot command loads', () => {
  it('status --json on NVML: the NVML source and /proc, not the other sources, the history or the analyses', () => {
    const { modules, stdout } = loadedBy(compiledMain(['status', '--json', '--source', 'nvml']), []);
    expect(JSON.parse(stdout).processes.map((p: { pid: number }) => p.pid)).toEqual([sleeper.pid]);
    expect(modules).toEqual(expect.arrayContaining(['cli/commands/status.js', 'sources/nvml/source.js', 'sources/procfs/enrich.js']));
    expect(under(modules, ['sources/replay/', 'sources/smi/', 'sources/files/', 'store/', 'orchestrate/', 'core/oom/', 'core/estimate/', 'core/diagnose/', 'core/snapshot/', 'supervise/companion', 'better-sqlite3', 'yaml'])).toEqual([]);
  });

  it('doctor: the diagnosis, not SQLite, YAML, the supervisor, the live sampler or the other analyses', () => {
    const { modules, stdout } = loadedBy(compiledMain(['doctor', '--window', '0']), []);
    expect(stdout).toContain(String(sleeper.pid));
    expect(modules).toEqual(expect.arrayContaining(['orchestrate/diagnosis-window.js', 'core/diagnose/engine.js']));
    expect(under(modules, ['sources/replay/', 'sources/smi/', 'store/db/', 'store/recording/', 'orchestrate/live-sampler', 'orchestrate/fit-loop', 'core/oom/', 'core/estimate/', 'core/snapshot/', 'supervise/run', 'supervise/pipeline', 'better-sqlite3', 'yaml'])).toEqual([]);
  });

  it('the executable runs from its bundle: bin.js alone, none of the compiled modules', () => {
    const { modules, stdout } = loadedBy([BIN], ['status', '--json', '--source', 'nvml']);
    expect(JSON.parse(stdout).kind).toBe('gpumem.status');
    expect(modules.filter((m) => !m.includes(':'))).toEqual(['cli/bin.js']);
  });

  it('the hook sees what is loaded: replaying a recording loads the recording reader', () => {
    const { modules } = loadedBy(compiledMain(['status', '--json', '--replay', join(ROOT, 'examples/doctor-example.ndjson')]), []);
    expect(under(modules, ['sources/replay/'])).not.toEqual([]);
  });
});
