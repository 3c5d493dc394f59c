/** `gpumem status --json` and the server's /api/v1/status: one sample (docs/status.md). */
import type { Sample } from '../types.js';
import { anyObject, arrayOf, integer, string, versioned, type DocumentEntry } from './schema.js';

export const STATUS_SCHEMA_VERSION = 1;
export const STATUS_KIND = 'gpumem.status';

export type StatusDoc = { schemaVersion: typeof STATUS_SCHEMA_VERSION; kind: typeof STATUS_KIND } & Sample;

/** Builds the versioned document for one sample. */
export function statusJson(sample: Sample): StatusDoc {
  return { schemaVersion: STATUS_SCHEMA_VERSION, kind: STATUS_KIND, ...sample };
}

const sourceSchema = { type: 'object', required: ['kind'], properties: { kind: string, detail: string } } as const;

export const statusSchema = versioned(STATUS_SCHEMA_VERSION, STATUS_KIND, {
  timeMs: integer,
  source: sourceSchema,
  devices: arrayOf({ type: 'object', required: ['index', 'uuid', 'name', 'memory'], properties: { index: integer, uuid: string, name: string, memory: anyObject } }),
  processes: arrayOf({ type: 'object', required: ['pid', 'gpuUuid', 'usedBytes'], properties: { pid: integer, gpuUuid: string, usedBytes: { type: ['integer', 'null'] } } }),
  unavailable: { type: 'object', additionalProperties: string },
});

export const statusEntry: DocumentEntry = {
  kind: STATUS_KIND, kindInDocument: STATUS_KIND, version: STATUS_SCHEMA_VERSION,
  emittedBy: 'status --json, GET /api/v1/status', doc: 'docs/status.md', module: 'src/core/documents/status.ts', schema: statusSchema,
};
