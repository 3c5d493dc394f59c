/** Opens the GPU source a command's --source/--replay/--nvml-lib options ask for (shared by every command). */
import { openSource, type GpuSource, type OpenSourceOptions, type SourceChoice } from '../sources/index.js';
import type { CommandContext } from './context.js';

/** The openSource options this invocation's --source, --replay and --nvml-lib ask for. */
export function sourceOptionsFromContext(ctx: CommandContext): OpenSourceOptions {
  const o = ctx.args.options;
  return {
    source: (typeof o.source === 'string' ? o.source : 'auto') as SourceChoice,
    ...(typeof o.replay === 'string' ? { replay: o.replay } : {}),
    ...(typeof o.nvmlLib === 'string' ? { nvmlLib: o.nvmlLib } : {}),
    env: ctx.env,
  };
}

/**
 * The GpuSource for this invocation: --replay FILE, else --source (auto: NVML, then nvidia-smi) with
 * --nvml-lib / GPUMEM_NVML_LIB and GPUMEM_NVIDIA_SMI honoured. Throws GpumemError('NO_GPU_ACCESS') when
 * nothing can be read; the CLI turns that into exit 3.
 */
export function openSourceFromContext(ctx: CommandContext): Promise<GpuSource> {
  return openSource(sourceOptionsFromContext(ctx));
}
