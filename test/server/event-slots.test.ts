/**
 * Event-stream slots are never held for good: 32 clients that connect and never read cannot lock the page
 * out (a new page takes the slot of a stalled or the oldest client), and a client whose socket stays full
 * past the bound is dropped at the next message.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventHub } from '../../src/server/http/events.js';
import { asRes, Socketish } from './socketish.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
const sockets: Socket[] = [];

beforeAll(async () => {
  h = await startHarness({ intervalMs: 100 });
}, 60_000);
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await h?.close();
});

/** A client that asks for the event stream and never reads a byte of it. */
async function stalledClient(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.pause();
  socket.write('GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  return socket;
}

describe('event stream slots', () => {
  it('32 clients that never read do not lock a new page out: it gets the stream and a message', async () => {
    for (let k = 0; k < 32; k++) await stalledClient(h.port);
    while (h.app.events.size < 32) await new Promise((r) => setTimeout(r, 10));
    const controller = new AbortController();
    const res = await fetch(`${h.base}/api/v1/events`, { signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toMatch(/^event: /);
    controller.abort();
    expect(h.app.events.size).toBeLessThanOrEqual(32);
    expect(h.app.events.evicted).toBeGreaterThanOrEqual(1);
  });
});


describe('EventHub eviction', () => {
  it('drops a client whose socket stayed full past the bound, and keeps one that drained', () => {
    let now = 0;
    const hub = new EventHub({ maxClients: 4, stallMs: 1000, nowMs: () => now });
    const stuck = new Socketish();
    const slow = new Socketish();
    hub.add(asRes(stuck), null);
    hub.add(asRes(slow), null);
    stuck.writableNeedDrain = true;
    slow.writableNeedDrain = true;
    hub.broadcast('sample', '{}');
    now = 600;
    slow.writableNeedDrain = false;
    slow.emit('drain');
    hub.broadcast('sample', '{}');
    now = 1000;
    slow.writableNeedDrain = true;
    hub.broadcast('sample', '{}');
    expect(stuck.destroyed).toBe(true);
    expect(slow.destroyed).toBe(false);
    expect(hub.size).toBe(1);
    expect(hub.evicted).toBe(1);
  });

  it('a full hub gives a new client the slot of the longest-stalled client, or else of the oldest', () => {
    let now = 0;
    const hub = new EventHub({ maxClients: 2, nowMs: () => now });
    const oldest = new Socketish();
    const stalled = new Socketish();
    hub.add(asRes(oldest), null);
    hub.add(asRes(stalled), null);
    stalled.writableNeedDrain = true;
    hub.broadcast('sample', '{}');
    now = 10;
    const third = new Socketish();
    hub.add(asRes(third), null);
    expect(stalled.destroyed).toBe(true);
    expect(oldest.destroyed).toBe(false);
    const fourth = new Socketish();
    hub.add(asRes(fourth), null);
    expect(oldest.destroyed).toBe(true);
    expect(third.destroyed).toBe(false);
    expect(hub.size).toBe(2);
  });
});
