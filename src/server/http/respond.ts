/**
 * Responses with the server's safety headers. The page may load scripts, styles and data only from its own
 * origin (no inline script, no CDN), cannot be framed, and sends no referrer.
 */
import type { ServerResponse } from 'node:http';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
  "font-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

const SAFETY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** Sends a complete response with the safety headers. */
export function send(res: ServerResponse, status: number, contentType: string, body: string | Buffer, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...SAFETY_HEADERS, 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(body)), ...extra });
  res.end(body);
}

/** Sends a JSON document (never cached: it describes the machine now). */
export function sendJson(res: ServerResponse, status: number, doc: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(doc), { 'Cache-Control': 'no-store' });
}

/** Sends an error as `{ error: { code, message } }` (`extra`: more headers, e.g. Retry-After). */
export function sendError(res: ServerResponse, status: number, code: string, message: string, extra: Record<string, string> = {}): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify({ error: { code, message } }), { 'Cache-Control': 'no-store', ...extra });
}

/** Starts a server-sent event stream. */
export function startEventStream(res: ServerResponse): void {
  res.writeHead(200, { ...SAFETY_HEADERS, 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
  res.flushHeaders();
}
