/**
 * Loads the command's code from one CommonJS file (dist/cli/gpumem.cjs, written by scripts/bundle-cli.mjs) with
 * V8's code cache, so a one-shot command neither resolves and links ES modules one by one nor parses the file:
 * Node 20 has no compile cache of its own (module.enableCompileCache came in 22.1). A cache holds the bytecode
 * V8 compiled for the bundle's top level; V8 takes it only in a process with the same V8 version, flags and CPU
 * features, so there is one cache file for each set of flags the launcher line in bin.ts starts Node with, and
 * one for none (scripts/bundle-cli.mjs writes them at build time). The file is found by Node's version and
 * command-line flags, not by V8's own tag (node:v8 alone costs ~3 ms to load); flags from elsewhere
 * (NODE_OPTIONS) make V8 refuse the cache, which costs the compile and nothing else.
 *
 * V8 checks a cache against the source's length only, not its text, so every cache file's name carries the
 * bundle's content hash: a bundle rebuilt without its caches finds none and is compiled from its text.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

/** What a load did with the code cache (tests read it; a missing or refused cache only costs time). */
export type CacheUse = 'used' | 'rejected' | 'absent';

export interface LoadedBundle {
  exports: Record<string, unknown>;
  cache: CacheUse;
}

/** A short name for a Node version and set of flags (FNV-1a: no module to load for it). */
function flagsKey(flags: readonly string[]): string {
  const text = `${process.version} ${process.arch} ${flags.join(' ')}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

/** The cache file of bundle `file` (content hash `hash`) for a Node started with `flags` (default: this one's). */
export function cacheFileOf(file: string, hash: string, flags: readonly string[] = process.execArgv): string {
  return `${file}.${hash}.${flagsKey(flags)}.cache`;
}

/**
 * The bundle's text as the function V8 compiles: the parameters of Node's own CommonJS wrapper. It must be the
 * same string at build time and at run time, since the cache is of this string.
 */
function compiled(file: string, cachedData: Buffer | undefined): Script {
  // latin1: the build checks that the bundle is ASCII, and one-byte decoding is a third of UTF-8's cost here.
  const source = readFileSync(file, 'latin1');
  return new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: file, cachedData });
}

function run(script: Script, file: string): Record<string, unknown> {
  const module = { exports: {} as Record<string, unknown> };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  return module.exports;
}

/** Loads the bundle at `url`, with its code cache when one fits this process; null when the file is not there. */
export function loadBundle(url: URL, hash: string): LoadedBundle | null {
  const file = fileURLToPath(url);
  if (!existsSync(file)) return null;
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFileOf(file, hash));
  } catch {
    cachedData = undefined;
  }
  const script = compiled(file, cachedData);
  const cache: CacheUse = cachedData === undefined ? 'absent' : script.cachedDataRejected ? 'rejected' : 'used';
  return { exports: run(script, file), cache };
}

/**
 * Writes the code cache of the bundle at `file` for a Node started with `flags`, which must be this process's
 * own V8 flags (the build runs it in a Node started with each set of flags the launcher uses). The bundle's top
 * level runs first, then each of `workload`'s command lines through its main() with the output thrown away, so
 * the cache also holds the bytecode of every function they called: V8 compiles a function when it is first
 * called, and a cache written after a run takes what that run compiled. A one-shot command then starts with its
 * code already compiled; what the workload did not call is compiled on first call, as without a cache.
 */
export async function writeCodeCache(file: string, hash: string, flags: readonly string[], workload: readonly (readonly string[])[] = []): Promise<string> {
  const script = compiled(file, undefined);
  const exports = run(script, file);
  if (workload.length > 0) {
    // Loaded here only: the one-shot path never writes a cache.
    const { Writable } = await import('node:stream');
    const main = exports.main as (argv: readonly string[], context: object) => Promise<number>;
    for (const argv of workload) {
      let said = '';
      const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
      const stderr = new Writable({ write: (chunk: Buffer, _encoding, done) => ((said += chunk.toString()), done()) });
      const status = await main(argv, { stdout: sink, stderr, env: { PATH: process.env.PATH ?? '' } });
      if (status !== 0) throw new Error(`code cache: \`gpumem ${argv.join(' ')}\` exited ${status}: ${said.trim()}`);
    }
  }
  const out = cacheFileOf(file, hash, flags);
  writeFileSync(out, script.createCachedData());
  return out;
}
