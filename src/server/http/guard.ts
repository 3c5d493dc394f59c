/**
 * Who may talk to the server. On loopback, only requests naming a loopback host are served, so a web page
 * elsewhere cannot reach the server through DNS rebinding. Actions need the token printed at start, sent
 * as `Authorization: Bearer TOKEN` (a header a cross-site form or image cannot send).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

/**
 * 127.0.0.0/8 and ::1. BlockList also matches an IPv4-mapped IPv6 address (::ffff:127.0.0.1) against the
 * IPv4 range, and it compares parsed addresses, so every spelling of one address gives the same answer.
 */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * True for an address only this machine can reach: an IP literal in 127.0.0.0/8 or ::1 in any spelling
 * (`0:0:0:0:0:0:0:1`, `::ffff:127.0.0.1`, `[::1]`), or `localhost`. Anything else — a wildcard, another
 * interface's address, a name — is not, so a doubtful case errs towards the Host check being off only when
 * the address really is reachable from elsewhere. The server decides from the address it actually bound
 * (`server.address()`), which the resolver has already turned into a plain literal (`127.1` → 127.0.0.1).
 */
export function isLoopbackAddress(address: string): boolean {
  const plain = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (plain.toLowerCase() === 'localhost') return true;
  const family = isIP(plain);
  if (family === 0) return false;
  return LOOPBACK.check(plain, family === 6 ? 'ipv6' : 'ipv4');
}

/** The Host header's name without its port, lower-cased (an IPv6 literal keeps its brackets). */
function hostName(req: IncomingMessage): string {
  const host = (req.headers.host ?? '').toLowerCase();
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.indexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

/**
 * Whether a Host header names this machine's loopback: `localhost`, a dotted-quad in 127.0.0.0/8 or a
 * bracketed loopback IPv6 literal. Shorthand spellings a browser never sends (`127.1`, `0x7f000001`) and
 * names that merely end in a loopback-looking part (`127.0.0.1.nip.io`) are refused.
 */
function isLoopbackHost(name: string): boolean {
  if (name === 'localhost') return true;
  if (name.startsWith('[')) return name.endsWith(']') && isIP(name.slice(1, -1)) === 6 && isLoopbackAddress(name);
  return isIP(name) === 4 && isLoopbackAddress(name);
}

/** Whether a request to a server bound to `bindAddress` may be served. */
export function hostAllowed(req: IncomingMessage, bindAddress: string): boolean {
  if (!isLoopbackAddress(bindAddress)) return true;
  return isLoopbackHost(hostName(req));
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

/**
 * The header the page sends with a snapshot upload. A page on another site cannot send it: a cross-site
 * request with a custom header needs a CORS preflight, which this server never grants, and a no-cors
 * request (a form, a `text/plain` fetch) cannot carry it at all.
 */
export const PAGE_HEADER = 'x-gpumem-page';

/**
 * Why an upload (work the server does for the client: memory and CPU) is refused, or null when it may go
 * on. It needs the action token, like an action, or must come from the server's own page, which may have
 * been opened without the token (`--readonly` has none): the page header, and when the browser says where
 * the request came from (Sec-Fetch-Site, Origin), this same origin.
 */
export function uploadRefusal(req: IncomingMessage, token: string | null): { status: 401 | 403; code: string; message: string } | null {
  if (token !== null && hasToken(req, token)) return null;
  if (req.headers[PAGE_HEADER] === '1') {
    // A browser that sends Sec-Fetch-Site says it itself (right behind a TLS proxy too); an older one is judged
    // by Origin; a request with neither comes from no browser page at all (a script).
    const site = req.headers['sec-fetch-site'];
    const origin = req.headers.origin?.toLowerCase();
    const host = (req.headers.host ?? '').toLowerCase();
    const sameOrigin = site !== undefined ? site === 'same-origin' : origin === undefined || origin === `http://${host}` || origin === `https://${host}`;
    if (sameOrigin) return null;
    return { status: 403, code: 'CROSS_SITE', message: 'uploads are taken only from this server\'s own page or with the token' };
  }
  const why = req.headers.authorization === undefined ? 'uploads need' : 'wrong token: uploads need';
  return { status: 401, code: 'TOKEN', message: `${why} the token gpumem serve printed (Authorization: Bearer TOKEN), or the header X-Gpumem-Page: 1 from the server's own page` };
}
