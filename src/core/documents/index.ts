/**
 * Every public JSON document built from core data or by the layers above core without server knowledge: one
 * module each (its type, `kind`, schema version, builder and JSON Schema). The server adds its own page
 * documents and the full registry in server/documents/. docs/output-files.md lists them all.
 */
import { companionMessageEntry } from './companion-message.js';
import { diagnoseEntry } from './diagnose.js';
import { tracedEntry, tracedStagesEntry } from './estimate-traced.js';
import { estimateEntry } from './estimate.js';
import { explainEntry, explainEventEntry } from './explain.js';
import { findingsEntry } from './findings.js';
import { fitEntry } from './fit.js';
import { killEntry } from './kill.js';
import { liveEntry } from './live.js';
import { pipelineEntry } from './pipeline.js';
import { processesEntry } from './processes.js';
import { pythonPathEntry } from './python-path.js';
import { recordingEntry } from './recording.js';
import { runDetailEntry } from './run-detail.js';
import { runEntry } from './run.js';
import { runsEntry } from './runs.js';
import type { DocumentEntry } from './schema.js';
import { serverEntry } from './server.js';
import { snapshotDiffEntry, snapshotEntry } from './snapshot.js';
import { statusEntry } from './status.js';

export type { DocumentEntry, JsonSchema } from './schema.js';

/** The documents whose home is in core, in the order docs/output-files.md lists them. */
export const CORE_DOCUMENTS: readonly DocumentEntry[] = [
  statusEntry, diagnoseEntry, explainEntry, explainEventEntry, estimateEntry, tracedEntry, tracedStagesEntry, fitEntry,
  snapshotEntry, snapshotDiffEntry, runEntry, pipelineEntry, runsEntry, runDetailEntry, killEntry, pythonPathEntry,
  companionMessageEntry, recordingEntry, serverEntry, processesEntry, findingsEntry, liveEntry,
];
