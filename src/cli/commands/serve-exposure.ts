/**
 * Who may reach `gpumem serve`, decided before it listens. Loopback is the default and needs nothing. Any
 * other address exposes every GPU process, its user and command line to the network, so it needs --expose
 * and then HTTPS (certificate and key files) or a read token that /metrics and /api/ require; actions over
 * the network stay off unless --actions asks for them.
 */
import { lookup } from 'node:dns/promises';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { GpumemError } from '../../core/errors.js';
import { isLoopbackAddress, type TlsFiles } from '../../server/index.js';
import type { ServeOptions } from '../options/serve.js';

export const TOKEN_FORM = /^[A-Za-z0-9._~+/=-]{16,256}$/;
const TOKEN_RULE = '16 to 256 characters of A–Z, a–z, 0–9, ._~+/=-';

export interface Exposure {
  /** The address to listen on, without URL brackets. */
  host: string;
  /** Whether `host` resolves to a loopback address. */
  loopback: boolean;
  tls: TlsFiles | null;
  readToken: string | null;
  /** Whether actions may be offered at all (loopback, or --expose --actions); --readonly still turns them off. */
  actionsAllowed: boolean;
}

/** A small regular file's bytes (at most `maxBytes`), or a GpumemError naming the option. */
function readSmallFile(path: string, option: string, maxBytes: number): Buffer {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new GpumemError(code === 'ENOENT' ? 'INPUT_NOT_FOUND' : 'INPUT_UNREADABLE', `${option}: cannot read ${path} (${code ?? String(error)})`, { hint: `give a readable file to ${option}` });
  }
  try {
    // Checked on the open file, so a FIFO or device named here cannot hang or flood the start.
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new GpumemError('INPUT_UNREADABLE', `${option}: ${path} is not a regular file`, { hint: `give a file to ${option}` });
    if (stat.size > maxBytes) throw new GpumemError('INPUT_TOO_LARGE', `${option}: ${path} is ${stat.size} bytes, more than ${maxBytes}`, { hint: `is ${path} the right file?` });
    const buffer = Buffer.alloc(stat.size);
    const read = readSync(fd, buffer, 0, stat.size, 0);
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

function readToken(o: ServeOptions, env: Readonly<Record<string, string | undefined>>): string | null {
  const fromFile = o.readTokenFile === undefined ? undefined : readSmallFile(o.readTokenFile, '--read-token-file', 4096).toString('utf8').trim();
  const token = fromFile ?? env.GPUMEM_SERVE_READ_TOKEN;
  if (token === undefined || token === '') return null;
  if (!TOKEN_FORM.test(token)) {
    const where = fromFile === undefined ? 'GPUMEM_SERVE_READ_TOKEN' : `--read-token-file ${o.readTokenFile}`;
    throw new GpumemError('BAD_OPTION_VALUE', `${where}: a read token needs ${TOKEN_RULE}`, { hint: 'e.g. openssl rand -hex 32' });
  }
  return token;
}

function tlsFiles(o: ServeOptions): TlsFiles | null {
  if ((o.tlsCert === undefined) !== (o.tlsKey === undefined)) {
    throw new GpumemError('BAD_OPTION_VALUE', `${o.tlsCert === undefined ? '--tls-key' : '--tls-cert'} needs ${o.tlsCert === undefined ? '--tls-cert' : '--tls-key'} too`, { hint: 'HTTPS needs the certificate chain and its private key' });
  }
  if (o.tlsCert === undefined || o.tlsKey === undefined) return null;
  const files = { cert: readSmallFile(o.tlsCert, '--tls-cert', 1 << 20), key: readSmallFile(o.tlsKey, '--tls-key', 1 << 20) };
  try {
    createSecureContext(files);
  } catch (error) {
    throw new GpumemError('INPUT_MALFORMED', `--tls-cert/--tls-key: ${(error as Error).message}`, { hint: 'give a PEM certificate chain and the PEM private key that belongs to it', cause: error });
  }
  return files;
}

/** Decides how serve may listen; throws a usage error for an exposure the options do not allow. */
export async function decideExposure(o: ServeOptions, env: Readonly<Record<string, string | undefined>>): Promise<Exposure> {
  // `[::1]` is how an IPv6 address is written in a URL; the resolver wants it bare.
  const host = /^\[.*\]$/.test(o.host) ? o.host.slice(1, -1) : o.host;
  const tls = tlsFiles(o);
  const token = readToken(o, env);
  let address: string;
  try {
    address = (await lookup(host)).address;
  } catch (error) {
    throw new GpumemError('BAD_OPTION_VALUE', `cannot listen on ${host}: ${(error as Error).message}`, { hint: 'give an address or a name this machine resolves (--host)', cause: error });
  }
  const loopback = isLoopbackAddress(address);
  if (!loopback && !o.expose) {
    throw new GpumemError('BAD_OPTION_VALUE', `--host ${host} is not loopback: every GPU process, its user and command line would be open to the network`, {
      hint: 'add --expose with --tls-cert/--tls-key or a read token (GPUMEM_SERVE_READ_TOKEN, --read-token-file); Prometheus on this machine needs neither',
    });
  }
  if (!loopback && tls === null && token === null) {
    throw new GpumemError('BAD_OPTION_VALUE', `--expose on ${host} needs HTTPS (--tls-cert and --tls-key) or a read token (GPUMEM_SERVE_READ_TOKEN or --read-token-file)`, {
      hint: 'a token alone is sent in the clear over plain HTTP: prefer both on an untrusted network',
    });
  }
  return { host, loopback, tls, readToken: token, actionsAllowed: loopback || o.actions };
}
