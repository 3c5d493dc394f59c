/** The event hub skips a client whose socket has not drained, so its backlog stays at one message. */
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { EventHub } from '../../src/server/http/events.js';
import { Socketish } from './socketish.js';

describe('EventHub', () => {
  it('writes to clients that keep up and skips the ones that do not', () => {
    const hub = new EventHub({ maxClients: 2 });
    const fast = new Socketish();
    const slow = new Socketish();
    hub.add(fast as unknown as ServerResponse, null);
    hub.add(slow as unknown as ServerResponse, 'event: sample\ndata: {}\n\n');
    slow.writableNeedDrain = true;
    for (let k = 0; k < 100; k++) hub.broadcast('sample', `{"k":${k}}`);
    expect(fast.written).toHaveLength(100);
    expect(slow.written).toHaveLength(1);
    expect(hub.skipped).toBe(100);
    slow.emit('close');
    expect(hub.size).toBe(1);
  });
});

describe('EventHub catch-up', () => {
  it('gives a client that skipped a message the complete one next, and the others the short one', () => {
    const sizes: number[] = [];
    const hub = new EventHub({ maxClients: 4, onSizeChange: (n) => sizes.push(n) });
    const fast = new Socketish();
    const slow = new Socketish();
    hub.add(fast as unknown as ServerResponse, null);
    hub.add(slow as unknown as ServerResponse, null);
    let completes = 0;
    const complete = (): string => `{"all":${++completes}}`;
    slow.writableNeedDrain = true;
    hub.broadcast('sample', '{"delta":1}', complete);
    slow.writableNeedDrain = false;
    hub.broadcast('sample', '{"delta":2}', complete);
    hub.broadcast('sample', '{"delta":3}', complete);
    expect(fast.written).toEqual(['{"delta":1}', '{"delta":2}', '{"delta":3}'].map((d) => `event: sample\ndata: ${d}\n\n`));
    expect(slow.written).toEqual(['event: sample\ndata: {"all":1}\n\n', 'event: sample\ndata: {"delta":3}\n\n']);
    expect(completes).toBe(1);
    slow.emit('close');
    hub.closeAll();
    expect(sizes).toEqual([1, 2, 1, 0]);
  });
});
