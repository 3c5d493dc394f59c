/**
 * Every line the PyTorch companion writes on its channel validates as gpumem.companion-message: the real
 * companion (python/gpumem_torch, loaded by its sitecustomize) in a training script on the fake torch, talking
 * to a Unix socket as the supervisor's. A line with a type the schema does not know, or without its pid, is
 * rejected.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { documentProblems } from '../helpers/document-schemas.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'gpumem-companion-doc-'));
let server: Server | null = null;
afterAll(() => {
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Listens on a Unix socket and collects every line any connection sends. */
function listen(path: string): Promise<string[]> {
  const lines: string[] = [];
  return new Promise((resolve) => {
    server = createServer((socket) => {
      let rest = '';
      socket.on('data', (chunk: Buffer) => {
        const parts = (rest + chunk.toString('utf8')).split('\n');
        rest = parts.pop() ?? '';
        lines.push(...parts.filter((l) => l.trim() !== ''));
      });
    });
    server.listen(path, () => resolve(lines));
  });
}

describe("the companion's messages", () => {
  it('every line of a training run with an OOM validates as gpumem.companion-message', async () => {
    const socket = join(dir, 'channel.sock');
    const lines = await listen(socket);
    const python = [join(ROOT, 'python/_site'), join(ROOT, 'test/python/fake_torch_versions/v2_11'), join(ROOT, 'python')].join(':');
    const env = { ...process.env, PYTHONPATH: python, PYTHONDONTWRITEBYTECODE: '1', GPUMEM_COMPANION_CHANNEL: `unix:${socket}`, GPUMEM_COMPANION_RATE_HZ: '50' };
    const child = spawn('python3', [join(ROOT, 'test/python/scripts/train_and_oom.py'), '0.15'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(0);
    // The socket may still hold the last lines when the process has exited.
    for (let i = 0; i < 50 && !lines.some((l) => l.includes('"bye"')); i++) await new Promise((r) => setTimeout(r, 20));
    const messages = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const type of ['hello', 'stats', 'oom', 'bye']) expect(messages.map((m) => m.type), type).toContain(type);
    for (const m of messages) expect(documentProblems('gpumem.companion-message', m), JSON.stringify(m).slice(0, 200)).toEqual([]);
    const hello = messages.find((m) => m.type === 'hello') as Record<string, unknown>;
    expect(documentProblems('gpumem.companion-message', { ...hello, type: 'greeting' })).toEqual(['/type must be equal to one of the allowed values']);
    const { pid: _pid, ...withoutPid } = hello;
    expect(documentProblems('gpumem.companion-message', withoutPid)).toEqual(["/ must have required property 'pid'"]);
  });
});
