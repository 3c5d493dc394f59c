/**
 * One line of the PyTorch companion's channel (docs/companion.md): a JSON object with `schemaVersion`, `type`,
 * `pid` and `timeMs`, then the fields of its type. The Python side writes it; core/companion/parse.ts reads it
 * field by field and refuses other versions. The schema pins the envelope every message shares.
 */
import { COMPANION_SCHEMA_VERSION, type CompanionMessage } from '../companion/messages.js';
import { integer, versioned, type DocumentEntry } from './schema.js';

export { COMPANION_SCHEMA_VERSION, type CompanionMessage };
export const COMPANION_MESSAGE_KIND = 'gpumem.companion-message';

export const COMPANION_MESSAGE_TYPES = ['hello', 'cuda', 'devices', 'stats', 'oom', 'exception', 'error', 'steps', 'memory', 'sites', 'rank', 'bye'] as const;

export const companionMessageSchema = versioned(COMPANION_SCHEMA_VERSION, null, {
  type: { enum: [...COMPANION_MESSAGE_TYPES] },
  pid: { ...integer, minimum: 0 },
  timeMs: { ...integer, minimum: 0 },
});

export const companionMessageEntry: DocumentEntry = {
  kind: COMPANION_MESSAGE_KIND, kindInDocument: null, version: COMPANION_SCHEMA_VERSION,
  emittedBy: 'the PyTorch companion, one per line on its channel', doc: 'docs/companion.md', module: 'src/core/documents/companion-message.ts', schema: companionMessageSchema,
};
