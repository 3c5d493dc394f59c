/**
 * Debian's Firefox driven directly over WebDriver BiDi, for the page's Firefox test. playwright-core drives
 * only its own patched Firefox, so this is a small client of its own: a WebSocket (RFC 6455: text frames,
 * masked, no extensions) over node:net, BiDi commands matched to replies by id, and events kept in a list.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIREFOX } from '../setup/chromium.js';

/** A BiDi event as Firefox sent it. */
export interface BidiEvent {
  method: string;
  params: Record<string, unknown>;
}

interface Pending { resolve(v: Record<string, unknown>): void; reject(e: Error): void }

/** One Firefox process and its BiDi session. */
export class Firefox {
  readonly events: BidiEvent[] = [];
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];

  private constructor(private readonly proc: ChildProcess, private readonly socket: Socket, private readonly profile: string) {}

  /** Starts headless Firefox on a fresh profile and opens a BiDi session; rejects after timeoutMs. */
  static async launch(timeoutMs: number): Promise<Firefox> {
    const profile = mkdtempSync(join(tmpdir(), 'gpumem-firefox-'));
    // No update checks or first-run pages in a throwaway profile.
    writeFileSync(join(profile, 'user.js'), ['app.update.enabled', 'browser.shell.checkDefaultBrowser', 'datareporting.policy.dataSubmissionEnabled']
      .map((k) => `user_pref("${k}", false);\n`).join(''));
    const proc = spawn(FIREFOX, ['--headless', '--remote-debugging-port=0', '--profile', profile], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Firefox did not start its BiDi server within ${timeoutMs} ms: ${stderr.slice(-500)}`)), timeoutMs);
      proc.on('error', (e) => { clearTimeout(timer); reject(e); });
      proc.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const m = /WebDriver BiDi listening on ws:\/\/127\.0\.0\.1:(\d+)/.exec(stderr);
        if (m) { clearTimeout(timer); resolve(Number(m[1])); }
      });
    }).catch((e: unknown) => { killGroup(proc); rmSync(profile, { recursive: true, force: true }); throw e; });
    const socket = await openWebSocket(port, '/session', timeoutMs);
    const ff = new Firefox(proc, socket, profile);
    socket.on('data', (chunk: Buffer) => ff.onData(chunk));
    socket.on('close', () => ff.failAll(new Error('Firefox closed the BiDi connection')));
    await ff.send('session.new', { capabilities: {} });
    return ff;
  }

  /** Sends one BiDi command and resolves with its result; rejects on an error reply. */
  send(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    this.socket.write(frame(Buffer.from(JSON.stringify({ id, method, params }))));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  /** Evaluates an expression in a browsing context and returns its value (strings, numbers, booleans). */
  async evaluate(context: string, expression: string): Promise<unknown> {
    const r = await this.send('script.evaluate', { expression, target: { context }, awaitPromise: false });
    if (r.type !== 'success') throw new Error(`script.evaluate failed: ${JSON.stringify(r)}`);
    return (r.result as { value?: unknown }).value;
  }

  /** Evaluates `expression` until `check` passes or `timeoutMs` ends; returns the last value as a string. */
  async poll(context: string, expression: string, check: (v: string) => boolean, timeoutMs = 10_000): Promise<string> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const value = String(await this.evaluate(context, expression));
      if (check(value) || Date.now() > until) return value;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Chooses local files in the `<input type=file>` that `selector` finds, as a person picking them would. */
  async setFiles(context: string, selector: string, files: string[]): Promise<void> {
    const r = await this.send('script.evaluate', {
      expression: `document.querySelector(${JSON.stringify(selector)})`, target: { context }, awaitPromise: false, resultOwnership: 'root',
    });
    const sharedId = (r.result as { sharedId?: string } | undefined)?.sharedId;
    if (r.type !== 'success' || !sharedId) throw new Error(`no element ${selector}: ${JSON.stringify(r)}`);
    await this.send('input.setFiles', { context, element: { sharedId }, files });
  }

  /** Ends the BiDi session and kills Firefox with all its content processes. */
  async close(): Promise<void> {
    await Promise.race([this.send('session.end', {}).catch(() => undefined), new Promise((r) => setTimeout(r, 2000))]);
    this.socket.destroy();
    killGroup(this.proc);
    rmSync(this.profile, { recursive: true, force: true });
  }

  private failAll(e: Error): void {
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }

  private onData(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const f = parseFrame(this.buffer);
      if (!f) return;
      this.buffer = this.buffer.subarray(f.size);
      if (f.opcode === 0x9) this.socket.write(frame(f.payload, 0xa));
      if (f.opcode === 0x1 || f.opcode === 0x0) {
        this.fragments.push(f.payload);
        if (f.fin) { this.onMessage(Buffer.concat(this.fragments).toString('utf8')); this.fragments = []; }
      }
    }
  }

  private onMessage(text: string): void {
    const msg = JSON.parse(text) as { type: string; id?: number; result?: Record<string, unknown>; error?: string; message?: string; method?: string; params?: Record<string, unknown> };
    if (msg.type === 'event') { this.events.push({ method: msg.method ?? '', params: msg.params ?? {} }); return; }
    const p = msg.id === undefined ? undefined : this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id!);
    if (msg.type === 'success') p.resolve(msg.result ?? {});
    else p.reject(new Error(`BiDi ${msg.error ?? 'error'}: ${msg.message ?? text}`));
  }
}

function killGroup(proc: ChildProcess): void {
  try { if (proc.pid) process.kill(-proc.pid, 'SIGKILL'); } catch { /* already gone */ }
}

/** Opens a WebSocket to 127.0.0.1:port (the HTTP upgrade), resolving once the server switched protocols. */
function openWebSocket(port: number, path: string, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const timer = setTimeout(() => { socket.destroy(); reject(new Error(`no WebSocket upgrade from Firefox within ${timeoutMs} ms`)); }, timeoutMs);
    let head = Buffer.alloc(0);
    socket.on('error', (e) => { clearTimeout(timer); reject(e); });
    socket.on('connect', () => socket.write([
      `GET ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Upgrade: websocket', 'Connection: Upgrade',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`, 'Sec-WebSocket-Version: 13', '', '',
    ].join('\r\n')));
    const onHead = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      clearTimeout(timer);
      socket.off('data', onHead);
      const status = head.subarray(0, head.indexOf('\r\n')).toString();
      if (!status.includes(' 101 ')) { socket.destroy(); reject(new Error(`WebSocket upgrade refused: ${status}`)); return; }
      if (head.length > end + 4) socket.unshift(head.subarray(end + 4));
      resolve(socket);
    };
    socket.on('data', onHead);
  });
}

/** One masked client frame (FIN set). */
function frame(payload: Buffer, opcode = 0x1): Buffer {
  const len = payload.length;
  const header = len < 126 ? Buffer.from([0x80 | opcode, 0x80 | len])
    : len < 65536 ? Buffer.from([0x80 | opcode, 0x80 | 126, len >> 8, len & 0xff])
    : Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | 127]), (() => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(len)); return b; })()]);
  const mask = randomBytes(4);
  const masked = Buffer.alloc(len);
  for (let i = 0; i < len; i++) masked[i] = (payload[i] as number) ^ (mask[i & 3] as number);
  return Buffer.concat([header, mask, masked]);
}

/** One unmasked server frame from the start of buf, or null while incomplete. */
function parseFrame(buf: Buffer): { fin: boolean; opcode: number; payload: Buffer; size: number } | null {
  if (buf.length < 2) return null;
  const b0 = buf[0] as number;
  let len = (buf[1] as number) & 0x7f;
  let offset = 2;
  if (len === 126) { if (buf.length < 4) return null; len = buf.readUInt16BE(2); offset = 4; }
  else if (len === 127) { if (buf.length < 10) return null; len = Number(buf.readBigUInt64BE(2)); offset = 10; }
  if (buf.length < offset + len) return null;
  return { fin: (b0 & 0x80) !== 0, opcode: b0 & 0x0f, payload: buf.subarray(offset, offset + len), size: offset + len };
}
