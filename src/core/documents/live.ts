/** The server's /api/v1/live: the newest samples' per-GPU numbers the page charts (docs/serve.md). */
import { SERVE_SCHEMA_VERSION } from './server.js';
import { arrayOf, integer, nullable, number, object, versioned, type DocumentEntry } from './schema.js';

export const LIVE_KIND = 'gpumem.live';

export interface LiveDoc<Row> {
  schemaVersion: typeof SERVE_SCHEMA_VERSION;
  kind: typeof LIVE_KIND;
  samples: Row[];
}

/** Builds the document from the server's chart rows (server/live-row.ts), oldest first. */
export function liveDocument<Row>(samples: Row[]): LiveDoc<Row> {
  return { schemaVersion: SERVE_SCHEMA_VERSION, kind: LIVE_KIND, samples };
}

export const liveSchema = versioned(SERVE_SCHEMA_VERSION, LIVE_KIND, {
  samples: arrayOf(object({
    timeMs: number,
    devices: arrayOf(object({ index: integer, usedBytes: nullable(integer), totalBytes: nullable(integer), gpuPct: nullable(number), memoryPct: nullable(number) })),
  })),
});

export const liveEntry: DocumentEntry = {
  kind: LIVE_KIND, kindInDocument: LIVE_KIND, version: SERVE_SCHEMA_VERSION,
  emittedBy: 'GET /api/v1/live', doc: 'docs/serve.md', module: 'src/core/documents/live.ts', schema: liveSchema,
};
