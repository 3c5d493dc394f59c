/** The event hub skips a client whose socket has not drained, so its backlog stays at one message. */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { EventHub } from '../../src/server/http/events.js';

class Socketish extends EventEmitter {
  writableNeedDrain = false;
  written: string[] = [];
  writeHead(): this { return this; }
  flushHeaders(): void {}
  write(chunk: string): boolean {
    this.written.push(chunk);
    return !this.writableNeedDrain;
  }
  end(): void {}
}

describe('EventHub', () => {
  it('writes to clients that keep up and skips the ones that do not', () => {
    const hub = new EventHub(2);
    const fast = new Socketish();
    const slow = new Socketish();
    expect(hub.add(fast as unknown as ServerResponse, null)).toBe(true);
    expect(hub.add(slow as unknown as ServerResponse, 'event: sample\ndata: {}\n\n')).toBe(true);
    expect(hub.add(new Socketish() as unknown as ServerResponse, null)).toBe(false);
    slow.writableNeedDrain = true;
    for (let k = 0; k < 100; k++) hub.broadcast('sample', `{"k":${k}}`);
    expect(fast.written).toHaveLength(100);
    expect(slow.written).toHaveLength(1);
    expect(hub.skipped).toBe(100);
    slow.emit('close');
    expect(hub.size).toBe(1);
  });
});
