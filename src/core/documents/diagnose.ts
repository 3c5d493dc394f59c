/** `gpumem diagnose --json`, `gpumem doctor --json` and the server's /api/v1/diagnosis (docs/diagnose.md). */
import { DIAGNOSE_SCHEMA_VERSION } from '../diagnose/engine.js';
import { reportJson, type Fallback } from '../diagnose/report-json.js';
import { anyObject, arrayOf, integer, nullable, object, string, versioned, type DocumentEntry, type JsonSchema } from './schema.js';

export { DIAGNOSE_SCHEMA_VERSION, reportJson, type Fallback };
export const DIAGNOSE_KIND = 'gpumem.diagnose';

/** One finding: a rule's id, how bad, what it saw and what to do (also in gpumem.findings). */
export const findingSchema: JsonSchema = object(
  { id: string, severity: { enum: ['critical', 'warning', 'info'] }, title: string, evidence: anyObject, fix: string, command: string },
  ['command'],
);

export const diagnoseSchema = versioned(DIAGNOSE_SCHEMA_VERSION, null, {
  command: { enum: ['diagnose', 'doctor'] },
  timeMs: integer,
  window: anyObject,
  source: anyObject,
  recordingNote: nullable(string),
  fallback: nullable(object({ reason: string, recording: string })),
  devices: arrayOf(),
  accounting: arrayOf(),
  trees: arrayOf(),
  users: arrayOf(),
  processes: arrayOf(object({ pid: integer, gpuIndex: nullable(integer), usedBytes: nullable(integer) })),
  findings: arrayOf(findingSchema),
});

export const diagnoseEntry: DocumentEntry = {
  kind: DIAGNOSE_KIND, kindInDocument: null, version: DIAGNOSE_SCHEMA_VERSION,
  emittedBy: 'diagnose --json, doctor --json, GET /api/v1/diagnosis', doc: 'docs/diagnose.md', module: 'src/core/documents/diagnose.ts', schema: diagnoseSchema,
};
