/** The one shape of every error answer of the server: `{ error: { code, message } }` (http/respond.ts's sendError). */
import { object, string, type JsonSchema } from '../../core/documents/schema.js';

export const errorSchema: JsonSchema = object({ error: object({ code: string, message: string }) });
