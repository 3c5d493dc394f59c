/**
 * Who may talk to the server. On loopback, only requests naming a loopback host are served, so a web page
 * elsewhere cannot reach the server through DNS rebinding. Actions need the token printed at start, sent
 * as `Authorization: Bearer TOKEN` (a header a cross-site form or image cannot send).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** True for an address only this machine can reach. */
export function isLoopbackAddress(address: string): boolean {
  return address === 'localhost' || address === '::1' || /^127\.\d+\.\d+\.\d+$/.test(address);
}

/** The Host header's name without its port, lower-cased. */
function hostName(req: IncomingMessage): string {
  const host = (req.headers.host ?? '').toLowerCase();
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.indexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

/** Whether a request to a server bound to `bindAddress` may be served. */
export function hostAllowed(req: IncomingMessage, bindAddress: string): boolean {
  if (!isLoopbackAddress(bindAddress)) return true;
  return LOOPBACK_HOSTS.has(hostName(req)) || /^127\.\d+\.\d+\.\d+$/.test(hostName(req));
}

/** A fresh random action token (128 bits, hex). */
export function newToken(): string {
  return randomBytes(16).toString('hex');
}

/** Whether the request carries exactly `token` as a bearer token (compared in constant time). */
export function hasToken(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(header);
  if (!match) return false;
  const given = Buffer.from(match[1] as string);
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}
