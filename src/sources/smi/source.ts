/**
 * The nvidia-smi source: spawns `nvidia-smi -q -x` per sample and parses it. Used when NVML cannot be
 * loaded. One spawn per sample costs tens of milliseconds on a real driver, which is why NVML comes first.
 */
import { execFile } from 'node:child_process';
import { GpumemError } from '../../core/errors.js';
import type { Sample } from '../../core/types.js';
import type { GpuSource } from '../source.js';
import { parseSmiXml } from './parse-xml.js';

export interface SmiSourceOptions {
  /** Program to run; default `GPUMEM_NVIDIA_SMI` from env, else `nvidia-smi` looked up on PATH. */
  smiPath?: string;
  env?: NodeJS.ProcessEnv;
  /** Kill nvidia-smi after this long; a hung driver must not hang gpumem. Default 15000. */
  timeoutMs?: number;
}

/** The nvidia-smi program a source would run, given options and environment. */
export function resolveSmiPath(options: SmiSourceOptions = {}): string {
  return options.smiPath ?? options.env?.GPUMEM_NVIDIA_SMI ?? 'nvidia-smi';
}

/**
 * Runs nvidia-smi with `args` and returns its stdout. Throws GpumemError('SMI_ERROR') when the program is
 * missing, times out, or exits non-zero (its own first line of output is quoted: nvidia-smi prints
 * "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver…" to stdout).
 */
export function runSmi(path: string, args: readonly string[], options: SmiSourceOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      path,
      [...args],
      { env: options.env ?? process.env, timeout: options.timeoutMs ?? 15_000, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') {
          return reject(new GpumemError('SMI_ERROR', `${path} not found${path.includes('/') ? '' : ' on PATH'}`, {
            hint: 'install the NVIDIA driver utilities, or point GPUMEM_NVIDIA_SMI at nvidia-smi', cause: error,
          }));
        }
        const said = `${stdout}\n${stderr}`.split('\n').map((l) => l.trim()).find((l) => l !== '');
        const how = error.killed ? `timed out after ${options.timeoutMs ?? 15_000} ms` : `exited with ${code ?? error.signal}`;
        reject(new GpumemError('SMI_ERROR', `${path} ${args.join(' ')} ${how}${said ? `: ${said}` : ''}`, {
          hint: 'check that the NVIDIA driver is loaded (run nvidia-smi by hand)', cause: error,
        }));
      },
    );
  });
}

/**
 * Opens the nvidia-smi source. Runs nvidia-smi once to prove it works (so `auto` source selection can move
 * on when it does not) and throws GpumemError('SMI_ERROR') or ('INPUT_MALFORMED') otherwise. Samples are
 * not enriched with /proc facts here; sources/open.ts does that for every live source.
 */
export async function openSmiSource(options: SmiSourceOptions = {}): Promise<GpuSource> {
  const path = resolveSmiPath(options);
  parseSmiXml(await runSmi(path, ['-q', '-x'], options));
  let lastTimeMs = 0;
  let closed = false;
  return {
    kind: 'smi',
    async readSample(): Promise<Sample> {
      if (closed) throw new GpumemError('FAILED', 'nvidia-smi source used after close');
      const timeMs = Math.max(Date.now(), lastTimeMs);
      const parsed = parseSmiXml(await runSmi(path, ['-q', '-x'], options));
      lastTimeMs = timeMs;
      return {
        timeMs,
        source: { kind: 'smi', detail: `${path} -q -x` },
        devices: parsed.devices,
        processes: parsed.processes,
        unavailable: parsed.unavailable,
      };
    },
    close(): void {
      closed = true;
    },
  };
}
