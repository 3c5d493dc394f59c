/** `gpumem status --json` and the server's /api/v1/status: one sample (docs/status.md). */
import { STATUS_SCHEMA_VERSION, statusJson } from '../status-json.js';
import { anyObject, arrayOf, integer, string, versioned, type DocumentEntry } from './schema.js';

export { STATUS_SCHEMA_VERSION, statusJson };
export const STATUS_KIND = 'gpumem.status';

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
