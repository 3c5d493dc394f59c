/**
 * The header line of a recording (`gpumem record --out FILE`, docs/recording.md): line 1 of the NDJSON file,
 * naming the format and its version. It carries `format` and `version` rather than `schemaVersion` (readers of
 * versions 1 and 2 know it so). The header's type and the readers are in sources/replay/; the format's name and
 * version live here.
 */
import { boolean, integer, nullable, object, string, type DocumentEntry, type JsonSchema } from './schema.js';

export const RECORDING_FORMAT = 'gpumem-recording';
/**
 * 4: a value many items share in a delta written once (delta-shape.ts, SharedChange); 3: samples as deltas
 * between keyframes (delta-encode.ts); 2: host facts written once per process
 * (host-table.ts); 1: full host facts in every sample. All four are read.
 */
export const RECORDING_VERSION = 4;
export const RECORDING_KIND = 'gpumem.recording';

export const recordingHeaderSchema: JsonSchema = object({
  format: { const: RECORDING_FORMAT },
  version: { const: RECORDING_VERSION },
  createdMs: integer,
  writer: string,
  host: object({ hostname: nullable(string), platform: nullable(string), kernel: nullable(string), inContainer: nullable(boolean) }),
  note: nullable(string),
  intervalMs: nullable(integer),
  keyframes: object({ everySamples: integer, everyMs: integer }),
}, ['keyframes']);

export const recordingEntry: DocumentEntry = {
  kind: RECORDING_KIND, kindInDocument: null, version: RECORDING_VERSION,
  emittedBy: 'record --out FILE (line 1)', doc: 'docs/recording.md', module: 'src/core/documents/recording.ts', schema: recordingHeaderSchema,
};
