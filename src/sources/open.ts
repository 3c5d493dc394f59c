/**
 * Source selection: the one way commands get a GpuSource. `auto` tries NVML, then nvidia-smi; a recording
 * given with --replay wins over both. Live samples get host facts from /proc; recorded ones keep theirs.
 */
import { GpumemError, isGpumemError } from '../core/errors.js';
import { createHostEnricher, type ProcOptions } from './procfs/index.js';
import type { GpuSource } from './source.js';
import type { NvmlFields } from './nvml/source.js';

export type SourceChoice = 'auto' | 'nvml' | 'smi';

export interface OpenSourceOptions {
  source?: SourceChoice;
  /** A recording to replay instead of the GPUs. */
  replay?: string;
  /** libnvidia-ml path (else GPUMEM_NVML_LIB, else the loader's search for libnvidia-ml.so.1). */
  nvmlLib?: string;
  /** nvidia-smi program (else GPUMEM_NVIDIA_SMI, else nvidia-smi on PATH). */
  smiPath?: string;
  env: NodeJS.ProcessEnv;
  /** /proc location etc. for host facts (tests). */
  proc?: ProcOptions;
  /** The fields this consumer needs from NVML, and how fresh (see NvmlFields; default everything every sample). Ignored by other sources. */
  nvml?: NvmlFields;
}

/** What NVML would be loaded from, for messages. */
function nvmlTarget(options: OpenSourceOptions): string | undefined {
  return options.nvmlLib ?? options.env.GPUMEM_NVML_LIB ?? undefined;
}

async function openNvml(options: OpenSourceOptions): Promise<GpuSource> {
  // Loaded only when asked for, so commands that never touch a GPU never load koffi.
  const { openNvmlSource } = await import('./nvml/index.js');
  const libPath = nvmlTarget(options);
  return openNvmlSource({ ...options.nvml, ...(libPath === undefined ? {} : { libPath }) });
}

function withHostFacts(source: GpuSource, proc: ProcOptions | undefined): GpuSource {
  const enrich = createHostEnricher(proc);
  const energy = source.readTotalEnergyMj?.bind(source);
  return {
    kind: source.kind,
    readSample: async () => enrich(await source.readSample()),
    ...(energy ? { readTotalEnergyMj: energy } : {}),
    close: () => {
      enrich.close();
      source.close();
    },
  };
}

function describe(error: unknown): string {
  return isGpumemError(error) || error instanceof Error ? error.message : String(error);
}

/**
 * NVML's part of the no-GPU line, short: the library and why the loader refused it ("No such file or
 * directory", "invalid ELF header"), without repeating the path the loader's own message carries.
 */
function nvmlFailure(error: unknown, path: string): string {
  const details = isGpumemError(error) ? error.details : undefined;
  const reason = details?.loaderReason;
  if (typeof reason === 'string') return `NVML library "${path}": ${reason.replace(/^.*cannot open shared object file: /, '')}`;
  // NVML's own errors name the library already ("nvmlInit_v2 failed for …").
  return details?.libPath !== undefined ? `NVML: ${describe(error)}` : `NVML (${path}): ${describe(error)}`;
}

/**
 * Opens the GPU source the options ask for. `replay` → the recording (not re-enriched). `nvml`/`smi` →
 * that one only, its own error passed on. `auto` → NVML, else nvidia-smi; when both fail, one
 * GpumemError('NO_GPU_ACCESS') saying what was tried (library, nvidia-smi path) and why each failed.
 */
export async function openSource(options: OpenSourceOptions): Promise<GpuSource> {
  // Each source's modules are loaded only when it is the one asked for or tried: a one-shot `gpumem status` on
  // NVML never reads the recording reader or the nvidia-smi parsers (docs/status.md, "Start-up").
  if (options.replay !== undefined) return (await import('./replay/index.js')).openReplaySource(options.replay);
  const choice = options.source ?? 'auto';
  const smiOptions = { env: options.env, ...(options.smiPath === undefined ? {} : { smiPath: options.smiPath }) };
  if (choice === 'nvml') return withHostFacts(await openNvml(options), options.proc);
  if (choice === 'smi') return withHostFacts(await (await import('./smi/index.js')).openSmiSource(smiOptions), options.proc);
  const failures: string[] = [];
  try {
    return withHostFacts(await openNvml(options), options.proc);
  } catch (error) {
    failures.push(nvmlFailure(error, nvmlTarget(options) ?? 'libnvidia-ml.so.1'));
  }
  const { openSmiSource, resolveSmiPath } = await import('./smi/index.js');
  try {
    return withHostFacts(await openSmiSource(smiOptions), options.proc);
  } catch (error) {
    const said = describe(error);
    const path = resolveSmiPath(smiOptions);
    failures.push(said.startsWith(path) ? said : `${path}: ${said}`);
  }
  throw new GpumemError('NO_GPU_ACCESS', `no GPU access: ${failures.join('; ')}`, {
    hint: 'install or load the NVIDIA driver (nvidia-smi should work), pass --nvml-lib PATH, or read a recording with --replay FILE',
    details: { tried: failures },
  });
}
