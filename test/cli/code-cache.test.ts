/**
 * The executable's command code comes from one bundle compiled from V8's code cache (src/cli/code-cache.ts,
 * scripts/bundle-cli.mjs). The build must leave a cache V8 takes under every set of flags the launcher line
 * starts Node with; a cache that does not fit (other flags, another bundle) must cost only time, never load
 * the wrong bytecode or fail the command.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';

const CLI = join(__dirname, '../../dist/cli');
const BUNDLE = join(CLI, 'gpumem.cjs');
const LOADER = pathToFileURL(join(CLI, 'code-cache.js')).href;
const EXAMPLE = join(__dirname, '../../examples/doctor-example.ndjson');
const hashOf = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 16);
const dir = mkdtempSync(join(tmpdir(), 'gpumem-code-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The flag sets of bin.js's launcher line, as a shell would run them. */
function launcherFlagSets(): string[][] {
  const line = readFileSync(BIN, 'utf8').split('\n')[1] ?? '';
  return [...line.matchAll(/exec node ((?:--\S+ )*)"\$f"/g)].map((m) => (m[1] ?? '').trim().split(' '));
}

// A script file, not `node -e`: the cache is looked up by the flags Node was started with, and -e is one.
const loadScript = join(dir, 'load.mjs');
writeFileSync(loadScript, `import { loadBundle } from ${JSON.stringify(LOADER)};\nconst r = loadBundle(new URL(process.argv[2]), process.argv[3]);\nprocess.stdout.write(JSON.stringify(r && { cache: r.cache, main: typeof r.exports.main }));\n`);

/** Loads `bundle` in a Node started with `flags`; returns what it did with the cache and main's type. */
function load(flags: string[], bundle: string, hash: string): { cache: string; main: string } | null {
  const r = spawnSync(process.execPath, [...flags, loadScript, pathToFileURL(bundle).href, hash], { encoding: 'utf8', timeout: 20_000 });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as { cache: string; main: string } | null;
}

/** A copy of the bundle in a folder of its own (the bundle finds nothing by its own path but its caches). */
function copyOfBundle(name: string): string {
  const at = join(dir, name);
  copyFileSync(BUNDLE, at);
  return at;
}

describe('the command bundle and its code caches', () => {
  it('has three launcher flag sets, and V8 takes the built cache under each of them and under none', () => {
    const sets = launcherFlagSets();
    expect(sets).toHaveLength(3);
    for (const flags of [[], ...sets]) expect({ flags, ...load(flags, BUNDLE, hashOf(BUNDLE)) }).toEqual({ flags, cache: 'used', main: 'function' });
  });

  it('every cache file is named for the bundle beside it; no older build left one', () => {
    const caches = readdirSync(CLI).filter((n) => n.startsWith('gpumem.cjs.') && n.endsWith('.cache'));
    expect(caches).toHaveLength(launcherFlagSets().length + 1);
    for (const name of caches) expect(name).toMatch(new RegExp(`^gpumem\\.cjs\\.${hashOf(BUNDLE)}\\.[0-9a-f]{8}\\.cache$`));
  });

  it('a bundle changed at the same length does not take the old cache: compiled from its text, it runs', () => {
    const bundle = copyOfBundle('changed.cjs');
    const text = readFileSync(bundle, 'latin1');
    // Same length, other text: V8 alone would accept the old cache, since it checks only the length.
    writeFileSync(bundle, text.replace('__gpumemDist', '__gpumemDisT'), 'latin1');
    for (const name of readdirSync(CLI).filter((n) => n.startsWith(`gpumem.cjs.${hashOf(BUNDLE)}.`))) copyFileSync(join(CLI, name), join(dir, name.replace('gpumem.cjs', 'changed.cjs')));
    expect(load([], bundle, hashOf(bundle))).toEqual({ cache: 'absent', main: 'function' });
  });

  it('a cache V8 refuses (made under other flags) only costs the compile', () => {
    const bundle = copyOfBundle('refused.cjs');
    const hash = hashOf(bundle);
    // The watch flags' cache, under the name a Node without flags looks for.
    const probe = `import { cacheFileOf } from ${JSON.stringify(LOADER)}; process.stdout.write(cacheFileOf(process.argv[1], process.argv[2], JSON.parse(process.argv[3])));`;
    const nameFor = (file: string, flags: string[]): string => spawnSync(process.execPath, ['--input-type=module', '-e', probe, file, hash, JSON.stringify(flags)], { encoding: 'utf8' }).stdout;
    copyFileSync(nameFor(BUNDLE, launcherFlagSets()[0] ?? []), join(dir, 'refused.tmp'));
    renameSync(join(dir, 'refused.tmp'), nameFor(bundle, []));
    expect(load([], bundle, hash)).toEqual({ cache: 'rejected', main: 'function' });
  });

  it('no bundle: the loader says so (and bin.js falls back to the compiled modules)', () => {
    expect(load([], join(dir, 'none.cjs'), 'x')).toBeNull();
  });

  // A cache written after a workload holds the bytecode of every function the workload called. V8's function
  // log (--log-function-events) names each function it compiles from source ("interpreter") per script.
  it('a cache written after a command holds its functions: that command then compiles none of the bundle\'s', () => {
    const bundle = copyOfBundle('trained.cjs');
    const hash = hashOf(bundle);
    const log = join(dir, 'functions.log');
    const flags = ['--log-function-events', `--logfile=${log}`, '--no-logfile-per-isolate'];
    const doctor = ['doctor', '--replay', EXAMPLE];
    const writer = join(dir, 'write.mjs');
    writeFileSync(writer, `import { writeCodeCache } from ${JSON.stringify(LOADER)};\nprocess.stdout.write(await writeCodeCache(process.argv[2], process.argv[3], process.execArgv, JSON.parse(process.argv[4])));\nprocess.exit(0);\n`);
    const runner = join(dir, 'run.mjs');
    writeFileSync(runner, `import { loadBundle } from ${JSON.stringify(LOADER)};\nimport { Writable } from 'node:stream';\nconst r = loadBundle(new URL(process.argv[2]), process.argv[3]);\nconst sink = new Writable({ write: (c, e, done) => done() });\nconst status = await r.exports.main(JSON.parse(process.argv[4]), { stdout: sink, stderr: sink });\nprocess.stdout.write(JSON.stringify({ cache: r.cache, status }));\nprocess.exit(0);\n`);
    /** Functions of the bundle V8 compiled from source while `doctor` ran from a cache written after `workload`. */
    const compiledWith = (workload: string[][]): number => {
      const w = spawnSync(process.execPath, [...flags, writer, bundle, hash, JSON.stringify(workload)], { encoding: 'utf8', timeout: 60_000 });
      expect(w.stderr).toBe('');
      const r = spawnSync(process.execPath, [...flags, runner, pathToFileURL(bundle).href, hash, JSON.stringify(doctor)], { encoding: 'utf8', timeout: 60_000 });
      expect(JSON.parse(r.stdout)).toEqual({ cache: 'used', status: 0 });
      const lines = readFileSync(log, 'utf8').split('\n');
      const ids = new Set(lines.filter((l) => l.startsWith('script-details,') && l.split(',')[2] === bundle).map((l) => l.split(',')[1]));
      return lines.filter((l) => l.startsWith('function,interpreter,') && ids.has(l.split(',')[2] ?? '')).length;
    };
    const topLevelOnly = compiledWith([]);
    const afterDoctor = compiledWith([doctor]);
    expect(topLevelOnly).toBeGreaterThan(100);
    expect(afterDoctor).toBeLessThan(topLevelOnly / 10);
  });

  it('the build wrote the caches after the commands their Node starts: status\'s and the rest\'s hold more than the top level', () => {
    const bundle = copyOfBundle('top.cjs');
    const hash = hashOf(bundle);
    const topLevel = join(dir, 'top-level.mjs');
    writeFileSync(topLevel, `import { writeCodeCache } from ${JSON.stringify(LOADER)};\nprocess.stdout.write(await writeCodeCache(process.argv[2], process.argv[3], process.execArgv));\n`);
    const probe = `import { cacheFileOf } from ${JSON.stringify(LOADER)}; process.stdout.write(cacheFileOf(process.argv[1], process.argv[2], JSON.parse(process.argv[3])));`;
    const builtFor = (flags: string[]): number => statSync(spawnSync(process.execPath, ['--input-type=module', '-e', probe, BUNDLE, hashOf(BUNDLE), JSON.stringify(flags)], { encoding: 'utf8' }).stdout).size;
    const sets = launcherFlagSets();
    for (const flags of [[], ...sets.slice(1)]) {
      const own = spawnSync(process.execPath, [...flags, topLevel, bundle, hash], { encoding: 'utf8', timeout: 60_000 });
      expect(own.stderr).toBe('');
      // Compiled functions add a fifth and more (a doctor run about 70 %); the top level alone is the same size.
      expect({ flags, larger: builtFor(flags) > 1.2 * statSync(own.stdout).size }).toEqual({ flags, larger: true });
    }
  });
});
