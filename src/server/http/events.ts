/**
 * Server-sent events to open pages. One message is serialised per sample and written to every client; a
 * client whose socket has not drained the previous message skips this one, so a slow or stalled page
 * holds at most one message in memory and never delays sampling or the other clients.
 */
import type { ServerResponse } from 'node:http';
import { startEventStream } from './respond.js';

export class EventHub {
  private readonly clients = new Set<ServerResponse>();
  /** Messages not sent because a client was still busy (for tests and the benchmark). */
  skipped = 0;

  constructor(private readonly maxClients = 32) {}

  get size(): number {
    return this.clients.size;
  }

  /** Adds a client; false when the hub is full (the caller answers 503). */
  add(res: ServerResponse, first: string | null): boolean {
    if (this.clients.size >= this.maxClients) return false;
    startEventStream(res);
    this.clients.add(res);
    res.on('close', () => this.clients.delete(res));
    if (first !== null) res.write(first);
    return true;
  }

  /** Sends `event` with `data` (already JSON) to every client that is keeping up. */
  broadcast(event: string, data: string): void {
    if (this.clients.size === 0) return;
    const message = eventFrame(event, data);
    for (const res of this.clients) {
      if (res.writableNeedDrain) {
        this.skipped++;
        continue;
      }
      res.write(message);
    }
  }

  /** Ends every stream (server shutdown). */
  closeAll(): void {
    for (const res of this.clients) res.end();
    this.clients.clear();
  }
}

/** One SSE frame. */
export function eventFrame(event: string, data: string): string {
  return `event: ${event}\ndata: ${data}\n\n`;
}
