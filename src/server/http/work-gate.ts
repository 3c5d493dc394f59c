/**
 * Bounds the work the server does for clients: snapshot uploads held in memory and analyses running at
 * once. Each piece of work holds a ticket with the bytes it keeps; a request that would go over either
 * bound is answered 503 with Retry-After at once, before its body is read, so many parallel uploads
 * cannot grow the server's memory past one bound.
 */
export interface WorkLimits {
  /** Uploads and analyses at once. */
  maxJobs: number;
  /** Bytes of upload bodies held at once, over every upload. */
  maxBytes: number;
}

export interface WorkTicket {
  /** Holds `bytes` more; false (holding nothing more) when that would go over the bound. */
  grow(bytes: number): boolean;
  /** Gives everything back (a second call does nothing). */
  release(): void;
}

export class WorkGate {
  private jobs = 0;
  private bytes = 0;

  constructor(readonly limits: WorkLimits) {}

  /** Jobs running now (for tests and the log). */
  get running(): number {
    return this.jobs;
  }

  /** Bytes held now. */
  get heldBytes(): number {
    return this.bytes;
  }

  /** A ticket holding `bytes`, or null when a job slot or the bytes are not free. */
  enter(bytes = 0): WorkTicket | null {
    if (this.jobs >= this.limits.maxJobs || this.bytes + bytes > this.limits.maxBytes) return null;
    this.jobs++;
    this.bytes += bytes;
    let held = bytes;
    let open = true;
    return {
      grow: (more) => {
        if (!open || this.bytes + more > this.limits.maxBytes) return false;
        this.bytes += more;
        held += more;
        return true;
      },
      release: () => {
        if (!open) return;
        open = false;
        this.jobs--;
        this.bytes -= held;
      },
    };
  }
}
