/**
 * The small vocabulary the document schemas are written in (JSON Schema 2020-12 as plain objects), and the
 * shape of one registry entry. Schemas pin what a reader relies on: `schemaVersion`, `kind`, every top-level
 * field with its type and where `null` is allowed, and for the documents people parse most (status, diagnose,
 * explain, estimate, fit, runs, snapshot) every nested object too, written from the TypeScript types. They stay
 * open to added fields (`additionalProperties` is not false): adding a field keeps a document's version
 * (docs/output-files.md), and a replayed recording's objects may carry fields a newer gpumem wrote.
 */
export type JsonSchema = { readonly [keyword: string]: unknown };

export const integer = { type: 'integer' } as const;
export const number = { type: 'number' } as const;
export const string = { type: 'string' } as const;
export const boolean = { type: 'boolean' } as const;
export const anyObject = { type: 'object' } as const;
export const strings = { type: 'array', items: string } as const;

/**
 * The members of the string-literal union T, listed: the compiler refuses a list that misses a member or names
 * another, so an enumeration in a schema follows its type.
 */
export function members<T extends string>() {
  return <const L extends readonly T[]>(list: L & ([T] extends [L[number]] ? unknown : never)): L => list;
}

/** One of the given strings (a TypeScript union of string literals); with null when `orNull`. */
export function oneOf(values: readonly string[], orNull = false): JsonSchema {
  return { enum: orNull ? [...values, null] : [...values] };
}

/** An object keyed by names (a GPU index, a field name) whose values all are `values`. */
export function mapOf(values: JsonSchema): JsonSchema {
  return { type: 'object', additionalProperties: values };
}

/** Field name → why it is null (core/types.ts `Unavailable`): any names, each a reason in words. */
export const unavailable = mapOf(string);

/** `schema` or null; a plain type becomes a type list so the schema stays readable in the OpenAPI file. */
export function nullable(schema: JsonSchema): JsonSchema {
  const { type, ...rest } = schema;
  if (typeof type === 'string') return { ...rest, type: [type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

/** An array of `items` (any object when not given). */
export function arrayOf(items: JsonSchema = anyObject): JsonSchema {
  return { type: 'array', items };
}

/** An object whose listed properties are all required unless named in `optional`. */
export function object(properties: Record<string, JsonSchema>, optional: readonly string[] = []): JsonSchema {
  return { type: 'object', required: Object.keys(properties).filter((k) => !optional.includes(k)), properties };
}

/**
 * `schema` with no field required at any depth: for a document read back from storage (the history's run
 * reports), where a reader tolerates what is missing but each field that is there must have its type.
 */
export function presentFieldsOnly(schema: JsonSchema): JsonSchema {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      if (key === 'required' && Array.isArray(v)) continue;
      // Under `properties` the keys are field names (one may be called "required"); only their schemas change.
      out[key] = key === 'properties' ? Object.fromEntries(Object.entries(v as object).map(([name, s]) => [name, walk(s)])) : walk(v);
    }
    return out;
  };
  return walk(schema) as JsonSchema;
}

/** A versioned document: `schemaVersion` (and `kind` where the document carries one) fixed, then its fields. */
export function versioned(version: number, kind: string | null, properties: Record<string, JsonSchema>, optional: readonly string[] = []): JsonSchema {
  return object({ schemaVersion: { const: version }, ...(kind === null ? {} : { kind: { const: kind } }), ...properties }, optional);
}

/** One public JSON document in the registry. */
export interface DocumentEntry {
  /** Its name in the registry, e.g. gpumem.status. The document itself carries it only where `kindInDocument`. */
  kind: string;
  /** The `kind` the document carries, or null when it carries none (its content predates the registry). */
  kindInDocument: string | null;
  version: number;
  /** The commands and routes that emit it, and the page that documents it. */
  emittedBy: string;
  doc: string;
  /** The module that is its home (type, version, builder, schema), from the repository root. */
  module: string;
  schema: JsonSchema;
}
