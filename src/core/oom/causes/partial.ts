/**
 * A pasted piece of a message: say which numbers are missing so the ranking is read with that in mind, and
 * ask for the whole message when the missing ones are the ones that decide the cause.
 */
import type { CauseRule } from './helpers.js';

const DECIDING: Array<[string, 'requestedBytes' | 'freeBytes' | 'totalBytes']> = [
  ['the request ("Tried to allocate")', 'requestedBytes'],
  ['free memory', 'freeBytes'],
  ["the GPU's total", 'totalBytes'],
];

export const partialMessage: CauseRule = (event) => {
  if (!event.partial) return null;
  const missing = DECIDING.filter(([, field]) => event[field] === null).map(([name]) => name);
  return {
    id: 'partial-message',
    score: missing.length > 0 ? 15 : 5,
    title: 'Only part of the message was given',
    evidence: { missing: missing.join(', ') || 'none of the deciding numbers' },
    detail: `The text is cut at its start or end; the numbers shown are exact${missing.length > 0 ? `, but ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not in it, so causes that need ${missing.length > 1 ? 'them' : 'it'} could not be checked` : ''}.`,
    fix: event.hintVariable
      ? `Set ${event.hintVariable}=expandable_segments:True as the message's own hint says, and paste the whole message (from the exception line to the end of the hint) to rank the other causes.`
      : 'Paste the whole message, from the exception line to the end of the hint, to rank every cause.',
  };
};
