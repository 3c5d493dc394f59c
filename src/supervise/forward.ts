/**
 * Forwarding one child output stream to one of gpumem's streams. Two faults of the reader must not become
 * faults of the training: a slow or paused reader (the source is paused until the destination drains, so
 * memory stays bounded by the pipe buffers instead of growing with the output) and a reader that went
 * away (EPIPE: forwarding stops, the child's output is still read — for the tail and OOM detection — and
 * the child keeps running under supervision).
 */

interface Destination {
  write(chunk: Uint8Array): boolean;
  on?(event: 'error', listener: (error: Error) => void): unknown;
  once?(event: 'drain', listener: () => void): unknown;
  off?(event: 'error' | 'drain', listener: (...args: never[]) => void): unknown;
  destroyed?: boolean;
  writableEnded?: boolean;
}

export interface Forwarder {
  /** Forwards a chunk (or drops it when the destination is gone); pauses the source when it is full. */
  write(chunk: Uint8Array): void;
  /** True once the destination failed (its reader went away). */
  broken(): boolean;
  /** Removes the listeners added to the destination and resumes the source. */
  detach(): void;
}

/** Builds the forwarder of `from` into `to`; `to` may be a minimal sink with only `write`. */
export function forwarder(from: NodeJS.ReadableStream, to: NodeJS.WritableStream): Forwarder {
  const dest = to as unknown as Destination;
  let broken = false;
  let waiting = false;
  const resume = (): void => {
    waiting = false;
    from.resume();
  };
  const onError = (): void => {
    broken = true;
    if (waiting) dest.off?.('drain', resume);
    resume();
  };
  dest.on?.('error', onError);
  return {
    write(chunk) {
      if (broken || dest.destroyed === true || dest.writableEnded === true) {
        broken = true;
        return;
      }
      if (!dest.write(chunk) && !waiting && dest.once) {
        waiting = true;
        from.pause();
        dest.once('drain', resume);
      }
    },
    broken: () => broken,
    detach() {
      dest.off?.('error', onError);
      if (waiting) dest.off?.('drain', resume);
      waiting = false;
    },
  };
}
