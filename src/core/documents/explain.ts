/**
 * `gpumem explain --json` (every OOM found in the inputs) and, with --follow, one line per OOM as it appears
 * (docs/explain.md). Byte counts are numbers, or decimal strings above 2^53 − 1.
 */
import type { OomFamily, OomFramework, OomMps } from '../oom/types.js';
import { OOM_SCHEMA_VERSION, eventToJson } from '../oom/json.js';
import { arrayOf, boolean, integer, mapOf, members, nullable, number, object, oneOf, string, strings, unavailable, versioned, type DocumentEntry, type JsonSchema } from './schema.js';

export { OOM_SCHEMA_VERSION, eventToJson };
export const EXPLAIN_KIND = 'gpumem.explain';
export const EXPLAIN_EVENT_KIND = 'gpumem.explain-event';

export interface ExplainDoc {
  schemaVersion: typeof OOM_SCHEMA_VERSION;
  inputs: string[];
  snapshots: string[];
  events: Array<Record<string, unknown>>;
}

/** The whole-run document: the inputs read (stdin as `<stdin>`), snapshot files found beside them, the events. */
export function explainDocument(inputs: string[], snapshots: string[], events: Array<Record<string, unknown>>): ExplainDoc {
  return { schemaVersion: OOM_SCHEMA_VERSION, inputs, snapshots, events };
}

/** One --follow line: a single event as soon as it is complete. */
export function explainEventDocument(event: Record<string, unknown>): { schemaVersion: typeof OOM_SCHEMA_VERSION; event: Record<string, unknown> } {
  return { schemaVersion: OOM_SCHEMA_VERSION, event };
}

/** A byte count: a number, or a decimal string above 2^53 − 1; null where the message did not print it. */
const bytes = { type: ['integer', 'string', 'null'], pattern: '^-?[0-9]+$' } as const;
const nullableInt = nullable(integer);
const nullableString = nullable(string);

/** Every family and framework of the types, as records so the compiler says when a member is missing or extra. */
const FAMILIES: Record<OomFamily, true> = {
  'pytorch-cuda': true, 'pytorch-cuda-async': true, 'pytorch-hip': true, 'pytorch-xpu': true, 'pytorch-mps': true, 'cuda-runtime': true,
  cublas: true, cudnn: true, nccl: true, xla: true, tensorflow: true, cupy: true, paddle: true, 'ggml-cuda': true, 'ggml-metal': true,
  'ggml-vulkan': true, 'vllm-kv-cache': true, onnxruntime: true, tensorrt: true, mxnet: true, numba: true, deepspeed: true,
};
const FRAMEWORKS: Record<OomFramework, true> = {
  pytorch: true, jax: true, tensorflow: true, nccl: true, cupy: true, paddle: true, 'llama.cpp': true, vllm: true, onnxruntime: true,
  tensorrt: true, mxnet: true, numba: true, deepspeed: true,
};

/** A ranked cause; `evidence` holds the named numbers its rule used (bytes as above). */
export const causeSchema: JsonSchema = object({
  id: string,
  score: number,
  title: string,
  evidence: mapOf({ type: ['number', 'string', 'boolean', 'null'] }),
  detail: string,
  fix: string,
});

/** The fields of one OOM event (eventToJson from OomEvent) but its causes: a run report's findings hold them so. */
export const oomEventFields: Record<string, JsonSchema> = {
  file: nullableString,
  line: integer,
  lines: arrayOf(integer),
  ranks: arrayOf(integer),
  family: oneOf(Object.keys(FAMILIES)),
  framework: oneOf(Object.keys(FRAMEWORKS)),
  exceptionClass: nullableString,
  era: nullable(object({ version: string, evidence: string })),
  gpuIndex: nullableInt,
  requestedBytes: bytes,
  totalBytes: bytes,
  freeBytes: bytes,
  processInUseBytes: bytes,
  allocatedByPytorchBytes: bytes,
  reservedUnallocatedBytes: bytes,
  reservedTotalBytes: bytes,
  allowedBytes: bytes,
  privatePoolBytes: bytes,
  otherProcesses: arrayOf(object({ pid: nullableInt, bytes })),
  requestMoreThan1EB: boolean,
  unavailable,
  mps: nullable(object({ mpsAllocatedBytes: bytes, otherAllocationsBytes: bytes, pool: oneOf(members<NonNullable<OomMps['pool']>>()(['private', 'shared']), true) })),
  tensor: nullable(object({ shape: arrayOf(integer), dtype: string, bytes })),
  kvCache: nullable(object({ maxModelLenTokens: nullableInt, cacheTokens: nullableInt, neededBytes: bytes, availableBytes: bytes, estimatedMaxModelLenTokens: nullableInt })),
  poolBytes: bytes,
  backend: nullableString,
  partial: boolean,
  hintVariable: nullableString,
  userFrame: nullable(object({ file: string, line: integer, function: string })),
  message: string,
};

/** One OOM event with its ranked causes. */
export const oomEventSchema: JsonSchema = object({ ...oomEventFields, causes: arrayOf(causeSchema) });

export const explainSchema = versioned(OOM_SCHEMA_VERSION, null, { inputs: strings, snapshots: strings, events: arrayOf(oomEventSchema) });
export const explainEventSchema = versioned(OOM_SCHEMA_VERSION, null, { event: oomEventSchema });

/** Where both documents of this module are described and built. */
const HOME = { doc: 'docs/explain.md', module: 'src/core/documents/explain.ts' } as const;
export const explainEntry: DocumentEntry = { kind: EXPLAIN_KIND, kindInDocument: null, version: OOM_SCHEMA_VERSION, emittedBy: 'explain --json', ...HOME, schema: explainSchema };
export const explainEventEntry: DocumentEntry = { kind: EXPLAIN_EVENT_KIND, kindInDocument: null, version: OOM_SCHEMA_VERSION, emittedBy: 'explain --follow --json (one per line)', ...HOME, schema: explainEventSchema };
