/** The server's /api/v1/findings: the findings of the latest diagnosis, without the accounting (docs/serve.md). */
import type { DiagnoseReport } from '../diagnose/engine.js';
import { DIAGNOSE_SCHEMA_VERSION } from '../diagnose/engine.js';
import { findingSchema } from './diagnose.js';
import { arrayOf, integer, versioned, type DocumentEntry } from './schema.js';

export const FINDINGS_KIND = 'gpumem.findings';

export interface FindingsDoc {
  schemaVersion: number;
  kind: typeof FINDINGS_KIND;
  timeMs: number;
  findings: DiagnoseReport['findings'];
}

/** Builds the document from a diagnosis; its version is the diagnosis's. */
export function findingsDocument(report: DiagnoseReport): FindingsDoc {
  return { schemaVersion: report.schemaVersion, kind: FINDINGS_KIND, timeMs: report.timeMs, findings: report.findings };
}

export const findingsSchema = versioned(DIAGNOSE_SCHEMA_VERSION, FINDINGS_KIND, { timeMs: integer, findings: arrayOf(findingSchema) });

export const findingsEntry: DocumentEntry = {
  kind: FINDINGS_KIND, kindInDocument: FINDINGS_KIND, version: DIAGNOSE_SCHEMA_VERSION,
  emittedBy: 'GET /api/v1/findings', doc: 'docs/serve.md', module: 'src/core/documents/findings.ts', schema: findingsSchema,
};
