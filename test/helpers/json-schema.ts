/**
 * A validator for the part of JSON Schema our documents' schemas use (docs/serve.openapi.json): type (one or a
 * list), const, enum, required, properties, additionalProperties, items, minimum, maximum, pattern, anyOf,
 * oneOf and local $ref. A schema keyword outside that part is reported as a problem rather than ignored, so
 * a schema never passes a document by using something this does not check.
 */
export type JsonSchema = Record<string, unknown>;

/** Keywords that only describe, and need no check. */
const PROSE = new Set(['description', 'default', 'format', 'title', 'example', 'examples']);
const CHECKED = new Set(['type', 'const', 'enum', 'required', 'properties', 'additionalProperties', 'items', 'minimum', 'maximum', 'pattern', 'anyOf', 'oneOf', '$ref']);

const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);
const hasType = (v: unknown, type: string): boolean => typeOf(v) === type || (type === 'number' && typeOf(v) === 'integer');

/**
 * Problems of `value` against `schema`, each "path: what" (empty when it validates). `root` is the document a
 * "#/…" $ref points into.
 */
export function validate(value: unknown, schema: JsonSchema, root: JsonSchema = schema, path = '$'): string[] {
  const out: string[] = [];
  for (const key of Object.keys(schema)) if (!CHECKED.has(key) && !PROSE.has(key)) out.push(`${path}: schema keyword "${key}" is not checked`);
  if (typeof schema.$ref === 'string') {
    const target = schema.$ref.replace(/^#\//, '').split('/').reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], root);
    if (target === undefined) return [...out, `${path}: $ref ${schema.$ref} points nowhere`];
    out.push(...validate(value, target as JsonSchema, root, path));
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
    if (!types.some((t) => hasType(value, t))) return [...out, `${path}: ${typeOf(value)}, not ${types.join(' or ')}`];
  }
  if ('const' in schema && JSON.stringify(value) !== JSON.stringify(schema.const)) out.push(`${path}: ${JSON.stringify(value)}, not ${JSON.stringify(schema.const)}`);
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) out.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) out.push(`${path}: ${value} < ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) out.push(`${path}: ${value} > ${schema.maximum}`);
  }
  if (typeof value === 'string' && typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) out.push(`${path}: ${JSON.stringify(value)} does not match ${schema.pattern}`);
  if (Array.isArray(value) && schema.items !== undefined) value.forEach((item, i) => out.push(...validate(item, schema.items as JsonSchema, root, `${path}[${i}]`)));
  if (typeOf(value) === 'object') {
    const object = value as Record<string, unknown>;
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const name of (schema.required ?? []) as string[]) if (!(name in object)) out.push(`${path}: no "${name}"`);
    for (const [name, v] of Object.entries(object)) {
      const sub = properties[name] ?? schema.additionalProperties;
      if (sub === false) out.push(`${path}: "${name}" is not allowed`);
      else if (sub !== undefined && sub !== true) out.push(...validate(v, sub as JsonSchema, root, `${path}.${name}`));
    }
  }
  for (const [key, exactlyOne] of [['anyOf', false], ['oneOf', true]] as const) {
    const options = schema[key] as JsonSchema[] | undefined;
    if (!options) continue;
    const passing = options.filter((o) => validate(value, o, root, path).length === 0).length;
    if (exactlyOne ? passing !== 1 : passing === 0) out.push(`${path}: matches ${passing} of the ${key} schemas`);
  }
  return out;
}
