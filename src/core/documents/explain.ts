/**
 * `gpumem explain --json` (every OOM found in the inputs) and, with --follow, one line per OOM as it appears
 * (docs/explain.md). Byte counts are numbers, or decimal strings above 2^53 − 1.
 */
import { OOM_SCHEMA_VERSION, eventToJson } from '../oom/json.js';
import { arrayOf, integer, nullable, number, object, string, strings, versioned, type DocumentEntry, type JsonSchema } from './schema.js';

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

const bytes = { type: ['integer', 'string', 'null'] } as const;

/** One OOM event with its ranked causes (eventToJson). */
export const oomEventSchema: JsonSchema = object({
  file: nullable(string),
  line: integer,
  family: string,
  requestedBytes: bytes,
  totalBytes: bytes,
  freeBytes: bytes,
  message: string,
  causes: arrayOf(object({ id: string, score: number, title: string, fix: string })),
});

export const explainSchema = versioned(OOM_SCHEMA_VERSION, null, { inputs: strings, snapshots: strings, events: arrayOf(oomEventSchema) });
export const explainEventSchema = versioned(OOM_SCHEMA_VERSION, null, { event: oomEventSchema });

export const explainEntry: DocumentEntry = {
  kind: EXPLAIN_KIND, kindInDocument: null, version: OOM_SCHEMA_VERSION,
  emittedBy: 'explain --json', doc: 'docs/explain.md', module: 'src/core/documents/explain.ts', schema: explainSchema,
};
export const explainEventEntry: DocumentEntry = {
  kind: EXPLAIN_EVENT_KIND, kindInDocument: null, version: OOM_SCHEMA_VERSION,
  emittedBy: 'explain --follow --json (one per line)', doc: 'docs/explain.md', module: 'src/core/documents/explain.ts', schema: explainEventSchema,
};
