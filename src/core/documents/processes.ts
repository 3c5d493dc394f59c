/** The server's /api/v1/processes: the GPU processes of the newest sample, as in gpumem.status (docs/serve.md). */
import type { Sample } from '../types.js';
import { SERVE_SCHEMA_VERSION } from './server.js';
import { gpuProcessSchema } from './sample-schema.js';
import { arrayOf, integer, versioned, type DocumentEntry } from './schema.js';

export const PROCESSES_KIND = 'gpumem.processes';

export interface ProcessesDoc {
  schemaVersion: typeof SERVE_SCHEMA_VERSION;
  kind: typeof PROCESSES_KIND;
  timeMs: number;
  processes: Sample['processes'];
}

/** Builds the document from one sample. */
export function processesDocument(sample: Sample): ProcessesDoc {
  return { schemaVersion: SERVE_SCHEMA_VERSION, kind: PROCESSES_KIND, timeMs: sample.timeMs, processes: sample.processes };
}

export const processesSchema = versioned(SERVE_SCHEMA_VERSION, PROCESSES_KIND, { timeMs: integer, processes: arrayOf(gpuProcessSchema) });

export const processesEntry: DocumentEntry = {
  kind: PROCESSES_KIND, kindInDocument: PROCESSES_KIND, version: SERVE_SCHEMA_VERSION,
  emittedBy: 'GET /api/v1/processes', doc: 'docs/serve.md', module: 'src/core/documents/processes.ts', schema: processesSchema,
};
