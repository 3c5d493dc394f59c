/**
 * `gpumem kill --json` and the server's POST /api/v1/processes/{pid}/kill: which processes were selected, why
 * each would be ended or refused, and what happened (docs/kill.md). The server's answer carries
 * `kind: 'gpumem.kill'` and no `dryRun` (it never dry-runs); the command's carries `dryRun` and no kind.
 * The rows' types are the supervisor's (supervise/kill/); the version and schema live here.
 */
import { arrayOf, boolean, integer, nullable, number, object, string, versioned, type DocumentEntry } from './schema.js';

export const KILL_SCHEMA_VERSION = 1;
export const KILL_KIND = 'gpumem.kill';

export interface KillDocument<Row, Outcome> {
  schemaVersion: typeof KILL_SCHEMA_VERSION;
  dryRun: boolean;
  rows: Row[];
  outcomes: Outcome[];
}

/** The command's document (no outcomes on a dry run). */
export function killDocument<Row, Outcome>(dryRun: boolean, rows: Row[], outcomes: Outcome[]): KillDocument<Row, Outcome> {
  return { schemaVersion: KILL_SCHEMA_VERSION, dryRun, rows, outcomes };
}

const nullableInt = nullable(integer);

export const killSchema = versioned(KILL_SCHEMA_VERSION, KILL_KIND, {
  dryRun: boolean,
  rows: arrayOf(object({
    pid: integer,
    startTicks: nullableInt,
    gpuUuid: nullable(string),
    gpuIndex: nullableInt,
    usedBytes: nullableInt,
    user: nullable(string),
    ageMs: nullable(number),
    cmdline: string,
    action: { enum: ['end', 'refuse'] },
    reason: string,
  })),
  outcomes: arrayOf(object({ pid: integer, outcome: string, detail: string })),
}, ['kind', 'dryRun']);

export const killEntry: DocumentEntry = {
  kind: KILL_KIND, kindInDocument: KILL_KIND, version: KILL_SCHEMA_VERSION,
  emittedBy: 'kill --json, POST /api/v1/processes/{pid}/kill', doc: 'docs/kill.md', module: 'src/core/documents/kill.ts', schema: killSchema,
};

/** The server's answer to a kill request: the same rows and outcomes, named by `kind`, never a dry run. */
export function killAnswerDocument<Row, Outcome>(rows: Row[], outcomes: Outcome[]): { schemaVersion: typeof KILL_SCHEMA_VERSION; kind: typeof KILL_KIND; rows: Row[]; outcomes: Outcome[] } {
  return { schemaVersion: KILL_SCHEMA_VERSION, kind: KILL_KIND, rows, outcomes };
}
