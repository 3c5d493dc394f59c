/**
 * Server-sent events to open pages. One message is serialised per sample and written to every client; a
 * client whose socket has not drained the previous message skips this one, so a slow or stalled page
 * holds at most one message in memory and never delays sampling or the other clients.
 */
import type { ServerResponse } from 'node:http';
import { startEventStream } from './respond.js';

export class EventHub {
  private readonly clients = new Set<ServerResponse>();
  /** Clients that skipped a message and need a complete one. */
  private readonly behind = new Set<ServerResponse>();
  /** Messages not sent because a client was still busy (for tests and the benchmark). */
  skipped = 0;

  /** `onSizeChange` hears the number of open streams whenever a client comes or goes. */
  constructor(private readonly maxClients = 32, private readonly onSizeChange?: (size: number) => void) {}

  get size(): number {
    return this.clients.size;
  }

  /** Adds a client; false when the hub is full (the caller answers 503). */
  add(res: ServerResponse, first: string | null): boolean {
    if (this.clients.size >= this.maxClients) return false;
    startEventStream(res);
    this.clients.add(res);
    res.on('close', () => {
      this.behind.delete(res);
      if (this.clients.delete(res)) this.onSizeChange?.(this.clients.size);
    });
    if (first !== null) res.write(first);
    this.onSizeChange?.(this.clients.size);
    return true;
  }

  /**
   * Sends `event` with `data` (already JSON) to every client that is keeping up. A client that skipped a
   * message gets `complete()` (computed once per call) instead of `data` the next time it keeps up, for
   * streams whose messages carry only what changed.
   */
  broadcast(event: string, data: string, complete?: () => string): void {
    if (this.clients.size === 0) return;
    const message = eventFrame(event, data);
    let full: string | null = null;
    for (const res of this.clients) {
      if (res.writableNeedDrain) {
        this.skipped++;
        if (complete) this.behind.add(res);
        continue;
      }
      if (this.behind.delete(res)) {
        full ??= eventFrame(event, (complete as () => string)());
        res.write(full);
      } else res.write(message);
    }
  }

  /** Ends every stream (server shutdown). */
  closeAll(): void {
    for (const res of this.clients) res.end();
    this.clients.clear();
    this.behind.clear();
    this.onSizeChange?.(0);
  }
}

/** One SSE frame. */
export function eventFrame(event: string, data: string): string {
  return `event: ${event}\ndata: ${data}\n\n`;
}
