/**
 * The registry of every public JSON document gpumem emits (kind → version → schema): core's documents and
 * the server's page documents. docs/serve.openapi.json takes its schemas from here (scripts/gen-docs.ts), and
 * the suite checks every command's and route's answer against them.
 */
import { CORE_DOCUMENTS, type DocumentEntry } from '../../core/documents/index.js';
import { pageCompareEntry } from './page-compare.js';
import { pageRunsEntry } from './page-runs.js';
import { pageSnapshotEntry } from './page-snapshot.js';
import { pageSplitEntry } from './page-split.js';
import { pageStepsEntry } from './page-steps.js';
import { runSamplesEntry } from './run-samples.js';
import { runSnapshotsEntry } from './run-snapshots.js';

export type { DocumentEntry, JsonSchema } from '../../core/documents/index.js';

export const DOCUMENTS: readonly DocumentEntry[] = [
  ...CORE_DOCUMENTS,
  runSamplesEntry, runSnapshotsEntry, pageRunsEntry, pageCompareEntry, pageStepsEntry, pageSplitEntry, pageSnapshotEntry,
];

/** The entry of `kind`; throws on a kind the registry does not list (a typo in a caller is a bug). */
export function documentEntry(kind: string): DocumentEntry {
  const found = DOCUMENTS.find((d) => d.kind === kind);
  if (!found) throw new Error(`no public document of kind ${kind}`);
  return found;
}
