/**
 * docs/serve.openapi.json, built from the route table (routes/table.ts) and the schemas of the documents the
 * routes answer with (documents/). `npm run docs` writes it; a test fails when the committed file differs.
 */
import { documentEntry, type JsonSchema } from './documents/index.js';
import { errorSchema } from './documents/error.js';
import { ROUTES, type RouteResponse } from './routes/table.js';

const INFO = {
  title: 'gpumem serve',
  version: '1',
  description: "JSON API of `gpumem serve` (docs/serve.md). Documents carry `schemaVersion`; the status, diagnose and runs documents are those of the CLI's --json.",
};

const SECURITY_SCHEMES = {
  token: { type: 'http', scheme: 'bearer', description: 'the token `gpumem serve` prints at start' },
  page: {
    type: 'apiKey', in: 'header', name: 'X-Gpumem-Page',
    description: '`1`, sent by the server\'s own page (which may not have the token); refused when the browser marks the request as cross-site (Sec-Fetch-Site) or from another origin (Origin). A cross-site page cannot send it: a custom header needs a CORS preflight, which the server never grants',
  },
};

/** The component name of a document kind: gpumem.run-detail → RunDetail. */
export function componentName(kind: string): string {
  return kind.replace(/^gpumem\./, '').split(/[-.]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}

const ref = (kind: string): JsonSchema => ({ $ref: `#/components/schemas/${kind === 'error' ? 'Error' : componentName(kind)}` });

function content(r: RouteResponse): Record<string, unknown> | undefined {
  if (r.text) return Object.fromEntries(r.text.map((type) => [type, { schema: { type: 'string' } }]));
  if (r.body === undefined) return undefined;
  const schema = typeof r.body === 'string' ? ref(r.body) : { anyOf: r.body.map(ref) };
  return { 'application/json': { schema } };
}

/** The OpenAPI 3.1 document of the server's API. */
export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const kinds = new Set<string>();
  for (const route of ROUTES) {
    const responses = Object.fromEntries(Object.entries(route.responses).map(([status, r]) => {
      for (const kind of typeof r.body === 'string' ? [r.body] : r.body ?? []) if (kind !== 'error') kinds.add(kind);
      const body = content(r);
      return [status, { description: r.description, ...(r.headers ? { headers: r.headers } : {}), ...(body ? { content: body } : {}) }];
    }));
    const { method, path, responses: _responses, ...rest } = route;
    paths[path] = { ...paths[path], [method.toLowerCase()]: { ...rest, responses } };
  }
  const schemas: Record<string, JsonSchema> = { Error: errorSchema };
  for (const kind of [...kinds].sort()) {
    const entry = documentEntry(kind);
    schemas[componentName(kind)] = { description: `${entry.kind} version ${entry.version} (${entry.doc}; schema in ${entry.module})`, ...entry.schema };
  }
  return { openapi: '3.1.0', info: INFO, servers: [{ url: 'http://127.0.0.1:9488' }], paths, components: { securitySchemes: SECURITY_SCHEMES, schemas } };
}

/** The file's text: two-space JSON and a final newline. */
export function openApiText(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}
