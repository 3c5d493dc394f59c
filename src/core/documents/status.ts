/** `gpumem status --json` and the server's /api/v1/status: one sample (docs/status.md). */
import type { Sample } from '../types.js';
import { sampleProperties } from './sample-schema.js';
import { versioned, type DocumentEntry } from './schema.js';

export const STATUS_SCHEMA_VERSION = 1;
export const STATUS_KIND = 'gpumem.status';

export type StatusDoc = { schemaVersion: typeof STATUS_SCHEMA_VERSION; kind: typeof STATUS_KIND } & Sample;

/** Builds the versioned document for one sample. */
export function statusJson(sample: Sample): StatusDoc {
  return { schemaVersion: STATUS_SCHEMA_VERSION, kind: STATUS_KIND, ...sample };
}

export const statusSchema = versioned(STATUS_SCHEMA_VERSION, STATUS_KIND, sampleProperties);

export const statusEntry: DocumentEntry = {
  kind: STATUS_KIND, kindInDocument: STATUS_KIND, version: STATUS_SCHEMA_VERSION,
  emittedBy: 'status --json, GET /api/v1/status', doc: 'docs/status.md', module: 'src/core/documents/status.ts', schema: statusSchema,
};
