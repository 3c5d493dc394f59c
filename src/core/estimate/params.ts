/**
 * `--params 7B` plus optional `--layers/--hidden/--heads/--kv-heads/--intermediate/--vocab/--mlp`: a model known
 * only by its size, shaped as a decoder without dropout when the shape is given: a modern one (SwiGLU MLP,
 * RMSNorm) by default, or with `--mlp gelu` one whose MLP is two matrices around a GeLU, with LayerNorm (GPT-2,
 * GPT-NeoX/Pythia/StableLM-Alpha, phi-1/1.5/2, Falcon).
 */
import { GpumemError } from '../errors.js';
import type { MlpKind, TransformerShape } from './architectures.js';
import type { ModelInput } from './setup.js';

const SUFFIX: Record<string, number> = { '': 1, k: 1e3, m: 1e6, b: 1e9, g: 1e9, t: 1e12 };

/** Parses a parameter count such as "7B", "350M", "1.3b" or "124439808" (decimal SI suffixes). */
export function parseParamCount(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmbgtKMBGT]?)\s*$/.exec(text);
  const factor = m ? SUFFIX[(m[2] ?? '').toLowerCase()] : undefined;
  // A count that rounds to zero is a typo (e.g. 0.0001), not a model: every byte printed would be 0.
  if (!m || factor === undefined || Math.round(Number(m[1]) * factor) < 1) {
    throw new GpumemError('BAD_OPTION_VALUE', `--params: cannot read "${text}" as a parameter count`, {
      hint: 'write e.g. 7B, 350M or 124439808',
    });
  }
  return Math.round(Number(m[1]) * factor);
}

/**
 * Attention splits the hidden size evenly over the heads, and grouped-query attention shares each key/value
 * head among an equal number of query heads; a shape that breaks either is a typo, and its estimate would
 * rest on fractional head sizes.
 */
function checkHeads(hidden: number, given: number | undefined, heads: number, kvHeads: number | undefined): void {
  if (given !== undefined && hidden % given !== 0) {
    throw new GpumemError('BAD_OPTION_VALUE', `--heads ${given} does not divide --hidden ${hidden}`, {
      hint: `each head gets hidden/heads dimensions; e.g. --heads ${nearestDivisor(hidden, given)}`,
    });
  }
  if (kvHeads !== undefined && (kvHeads > heads || heads % kvHeads !== 0)) {
    const headsText = given === undefined ? `the ${heads} attention heads (hidden/128; set --heads)` : `--heads ${heads}`;
    throw new GpumemError('BAD_OPTION_VALUE', `--kv-heads ${kvHeads} does not divide ${headsText}`, {
      hint: `each key/value head serves heads/kv-heads query heads; e.g. --kv-heads ${nearestDivisor(heads, kvHeads)}`,
    });
  }
}

/** The divisor of `n` closest to `near` (ties to the smaller), for hints. */
function nearestDivisor(n: number, near: number): number {
  let best = 1;
  // Bounded so an absurd --hidden cannot make the hint slow; real sizes are far below 10^12.
  for (let d = 1; d * d <= n && d <= 1_000_000; d++) {
    if (n % d !== 0) continue;
    for (const c of [d, n / d]) if (Math.abs(c - near) < Math.abs(best - near) || (Math.abs(c - near) === Math.abs(best - near) && c < best)) best = c;
  }
  return best;
}

export interface ShapeHints {
  layers?: number;
  hidden?: number;
  heads?: number;
  kvHeads?: number;
  intermediate?: number;
  vocab?: number;
  seq?: number;
  mlp?: MlpKind;
}

/**
 * Builds a ModelInput for `--params`. Without `layers` and `hidden` there is no shape (activations then need
 * --activation-bytes-per-sample). Intermediate defaults to Llama's rule for SwiGLU (8h/3 rounded up to a multiple
 * of 256), and to 4h for a GeLU MLP (GPT-2's, and the rule those families keep).
 */
export function modelFromParams(params: number, hints: ShapeHints): ModelInput {
  let shape: TransformerShape | null = null;
  if (hints.layers !== undefined && hints.hidden !== undefined) {
    const h = hints.hidden;
    const heads = hints.heads ?? Math.max(1, Math.round(h / 128));
    checkHeads(h, hints.heads, heads, hints.kvHeads);
    const mlp = hints.mlp ?? 'swiglu';
    const f = hints.intermediate ?? (mlp === 'gelu' ? 4 * h : Math.ceil((8 * h) / 3 / 256) * 256);
    shape = {
      family: 'decoder',
      layers: hints.layers,
      hidden: h,
      heads,
      kvHeads: hints.kvHeads ?? heads,
      headDim: h / heads,
      intermediate: f,
      vocab: hints.vocab ?? 32000,
      mlp,
      // The GeLU families normalise with LayerNorm, the SwiGLU ones with RMSNorm: the two come together.
      norm: mlp === 'gelu' ? 'layernorm' : 'rmsnorm',
      dropout: 0,
      outputWidth: hints.vocab ?? 32000,
      maxPositions: hints.seq ?? 2048,
    };
  } else if (hints.layers !== undefined || hints.hidden !== undefined) {
    throw new GpumemError('USAGE', '--layers and --hidden go together', { hint: 'give both, or neither with --activation-bytes-per-sample' });
  } else {
    // Without the two, there is no shape for the others to refine: they would be dropped without a word.
    const given = (['heads', 'kvHeads', 'intermediate', 'vocab', 'mlp'] as const).find((k) => hints[k] !== undefined);
    if (given !== undefined) {
      const flag = `--${given.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      throw new GpumemError('USAGE', `${flag} shapes the model, which needs --layers and --hidden too`, { hint: `e.g. --params 7B --layers 32 --hidden 4096 ${flag} …` });
    }
  }
  return { label: `${params} parameters`, tensors: null, totalParams: params, shape };
}
