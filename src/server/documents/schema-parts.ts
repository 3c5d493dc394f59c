/** Schema pieces shared by the page's documents: text cells, a run's id in the history. */
import { arrayOf, string, type JsonSchema } from '../../core/documents/schema.js';

/** A row of text cells of a fixed count (the page only places text). */
export function textRow(cells: number): JsonSchema {
  return { type: 'array', items: string, minItems: cells, maxItems: cells };
}

/** A table of such rows. */
export const textRows = (cells: number): JsonSchema => arrayOf(textRow(cells));
