/**
 * The server's own facts (/api/v1/server), and the schema version shared by the documents `gpumem serve`
 * builds itself (live series, processes, the page's documents) (docs/serve.md).
 */
import { boolean, string, versioned, type DocumentEntry } from './schema.js';

/** Schema version of the server's own documents. */
export const SERVE_SCHEMA_VERSION = 1;
export const SERVER_KIND = 'gpumem.server';

export interface ServerDoc {
  schemaVersion: typeof SERVE_SCHEMA_VERSION;
  kind: typeof SERVER_KIND;
  hostname: string;
  readonly: boolean;
}

/** Builds the document: the host's name and whether actions are refused (no token). */
export function serverDocument(hostname: string, facts: { readonly: boolean }): ServerDoc {
  return { schemaVersion: SERVE_SCHEMA_VERSION, kind: SERVER_KIND, hostname, ...facts };
}

export const serverSchema = versioned(SERVE_SCHEMA_VERSION, SERVER_KIND, { hostname: string, readonly: boolean });

export const serverEntry: DocumentEntry = {
  kind: SERVER_KIND, kindInDocument: SERVER_KIND, version: SERVE_SCHEMA_VERSION,
  emittedBy: 'GET /api/v1/server', doc: 'docs/serve.md', module: 'src/core/documents/server.ts', schema: serverSchema,
};
