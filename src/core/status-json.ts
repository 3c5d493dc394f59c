/** The --json document of `gpumem status`, also the server's /api/v1/status (schema in docs/status.md). */
import type { Sample } from './types.js';

export const STATUS_SCHEMA_VERSION = 1;

/** Builds the versioned document for one sample. */
export function statusJson(sample: Sample): Record<string, unknown> {
  return { schemaVersion: STATUS_SCHEMA_VERSION, kind: 'gpumem.status', ...sample };
}
