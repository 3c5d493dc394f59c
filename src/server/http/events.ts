/**
 * Server-sent events to open pages. One message is serialised per sample and written to every client; a
 * client whose socket has not drained the previous message skips this one, so a slow or stalled page
 * holds at most one message in memory and never delays sampling or the other clients.
 *
 * Slots are bounded and never held for good: a client whose socket stays full longer than `stallMs` is
 * dropped at the next message, and when every slot is taken a new page takes the slot of the client stalled
 * longest, or else of the oldest one. A page that loses its slot reconnects by itself (EventSource does), so
 * clients that connect and never read cannot lock the page out.
 */
import type { ServerResponse } from 'node:http';
import { startEventStream } from './respond.js';

export interface EventHubOptions {
  maxClients?: number;
  /** A client whose socket has not drained for this long is dropped (default 60 s). */
  stallMs?: number;
  /** `onSizeChange` hears the number of open streams whenever a client comes or goes. */
  onSizeChange?: (size: number) => void;
  /** The clock (tests pass their own). */
  nowMs?: () => number;
}

export class EventHub {
  /** Open clients in the order they came, each with the time its socket was first seen full (null: keeping up). */
  private readonly clients = new Map<ServerResponse, { stalledSinceMs: number | null }>();
  /** Clients that skipped a message and need a complete one. */
  private readonly behind = new Set<ServerResponse>();
  /** Messages not sent because a client was still busy (for tests and the benchmark). */
  skipped = 0;
  /** Clients dropped to free a slot or because they stalled (for tests and the log). */
  evicted = 0;
  private readonly maxClients: number;
  private readonly stallMs: number;
  private readonly onSizeChange: ((size: number) => void) | undefined;
  private readonly nowMs: () => number;

  constructor(options: EventHubOptions = {}) {
    this.maxClients = options.maxClients ?? 32;
    this.stallMs = options.stallMs ?? 60_000;
    this.onSizeChange = options.onSizeChange;
    this.nowMs = options.nowMs ?? Date.now;
  }

  get size(): number {
    return this.clients.size;
  }

  /** Adds a client, first freeing a slot when the hub is full (see the file comment). */
  add(res: ServerResponse, first: string | null): void {
    if (this.clients.size >= this.maxClients) this.drop(this.evictionCandidate());
    startEventStream(res);
    this.clients.set(res, { stalledSinceMs: null });
    res.on('close', () => this.forget(res));
    res.on('drain', () => {
      const client = this.clients.get(res);
      if (client) client.stalledSinceMs = null;
    });
    if (first !== null) res.write(first);
    this.onSizeChange?.(this.clients.size);
  }

  /**
   * Sends `event` with `data` (already JSON) to every client that is keeping up. A client that skipped a
   * message gets `complete()` (computed once per call) instead of `data` the next time it keeps up, for
   * streams whose messages carry only what changed.
   */
  broadcast(event: string, data: string, complete?: () => string): void {
    if (this.clients.size === 0) return;
    const message = eventFrame(event, data);
    const now = this.nowMs();
    let full: string | null = null;
    for (const [res, client] of this.clients) {
      if (res.writableNeedDrain) {
        client.stalledSinceMs ??= now;
        if (now - client.stalledSinceMs >= this.stallMs) {
          this.drop(res);
          continue;
        }
        this.skipped++;
        if (complete) this.behind.add(res);
        continue;
      }
      client.stalledSinceMs = null;
      if (this.behind.delete(res)) {
        full ??= eventFrame(event, (complete as () => string)());
        res.write(full);
      } else res.write(message);
    }
  }

  /** Ends every stream (server shutdown). */
  closeAll(): void {
    for (const res of this.clients.keys()) res.end();
    this.clients.clear();
    this.behind.clear();
    this.onSizeChange?.(0);
  }

  /** The client stalled longest (its socket full right now counts from now), else the oldest. */
  private evictionCandidate(): ServerResponse {
    let chosen: ServerResponse | null = null;
    let since = Infinity;
    const now = this.nowMs();
    for (const [res, client] of this.clients) {
      const stalled = client.stalledSinceMs ?? (res.writableNeedDrain ? now : null);
      if (stalled !== null && stalled < since) {
        chosen = res;
        since = stalled;
      }
    }
    return chosen ?? (this.clients.keys().next().value as ServerResponse);
  }

  /** Ends a client's stream and frees its slot now (its socket may take a while to close). */
  private drop(res: ServerResponse): void {
    this.evicted++;
    this.forget(res);
    // destroy, not end: a client that does not read would keep an ended response's buffered bytes.
    res.destroy();
  }

  private forget(res: ServerResponse): void {
    this.behind.delete(res);
    if (this.clients.delete(res)) this.onSizeChange?.(this.clients.size);
  }
}

/** One SSE frame. */
export function eventFrame(event: string, data: string): string {
  return `event: ${event}\ndata: ${data}\n\n`;
}
