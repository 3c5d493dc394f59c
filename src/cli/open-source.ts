/** Opens the GPU source a command's --source/--replay/--nvml-lib options ask for (shared by every command). */
// Straight to sources/open.js, not the sources/ door: the door re-exports every source's parsers, and a
// one-shot command would load them all before reading one GPU.
import { openSource, type OpenSourceOptions } from '../sources/open.js';
import type { GpuSource, NvmlFields } from '../sources/index.js';
import type { CommandContext } from './context.js';
import type { SourceOptions } from './options/shared.js';

/**
 * The openSource options this invocation's --source, --replay and --nvml-lib ask for, with the NVML fields the
 * command needs (default: every field every sample).
 */
export function sourceOptionsFromContext(ctx: CommandContext<SourceOptions>, nvml?: NvmlFields): OpenSourceOptions {
  const o = ctx.args.options;
  return {
    source: o.source,
    ...(o.replay !== undefined ? { replay: o.replay } : {}),
    ...(o.nvmlLib !== undefined ? { nvmlLib: o.nvmlLib } : {}),
    ...(nvml !== undefined ? { nvml } : {}),
    env: ctx.env,
  };
}

/**
 * The GpuSource for this invocation: --replay FILE, else --source (auto: NVML, then nvidia-smi) with
 * --nvml-lib / GPUMEM_NVML_LIB and GPUMEM_NVIDIA_SMI honoured. Throws GpumemError('NO_GPU_ACCESS') when
 * nothing can be read; the CLI turns that into exit 3.
 */
export function openSourceFromContext(ctx: CommandContext<SourceOptions>, nvml?: NvmlFields): Promise<GpuSource> {
  return openSource(sourceOptionsFromContext(ctx, nvml));
}
