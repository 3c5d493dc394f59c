/**
 * Checking JSON documents against the registry's schemas (src/server/documents/) with ajv, in strict mode: a
 * schema keyword ajv does not know is an error, not silently ignored, so a schema can never pass a document by
 * using something that is not checked.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { DOCUMENTS, documentEntry, type JsonSchema } from '../../src/server/documents/index.js';

/** A strict validator for JSON Schema 2020-12; OpenAPI's descriptive keywords are allowed, and only described. */
export function strictAjv(): Ajv2020 {
  return new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
}

const ajv = strictAjv();
const compiled = new Map<string, ValidateFunction>();

/** Problems of `value` as a document of `kind` ("path message" each; empty when it validates). */
export function documentProblems(kind: string, value: unknown): string[] {
  let check = compiled.get(kind);
  if (!check) {
    check = ajv.compile(documentEntry(kind).schema as JsonSchema & object);
    compiled.set(kind, check);
  }
  return check(value) ? [] : (check.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`.trim());
}

/** Problems of `value` against a schema given directly (an OpenAPI response schema, say). */
export function schemaProblems(schema: JsonSchema, value: unknown): string[] {
  const check = ajv.compile(schema as object);
  return check(value) ? [] : (check.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`.trim());
}

export { DOCUMENTS };
