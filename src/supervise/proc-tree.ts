/**
 * Tracks the whole process tree of a supervised child. A process belongs to the tree when it descends
 * from the child, shares the child's process group, or descended from it earlier: DataLoader workers whose
 * parent died are re-parented to init (or a subreaper) and must still count, so members are remembered by
 * (pid, start ticks) — a recycled pid never inherits membership. The same holds for the child's own pid
 * and its process group: once the child has been reaped its pid (and so the group id) is free for reuse,
 * and an unrelated process given that number must never be taken for the child — cleanup ends members.
 *
 * A process that leaves the tree on purpose (double fork + setsid before the first scan) is still found
 * two ways: it carries the run's environment marker (GPUMEM_RUN_MARK, checked once per new process in
 * /proc/PID/environ), and with gpumem a child subreaper it is re-parented to gpumem instead of init, where
 * `adopter` finds it even when it scrubbed its environment.
 */
import { childrenByParent, readEnviron, readProcStat, readProcTable, type ProcStat } from '../sources/index.js';

type ProcEntry = ProcStat;

export interface TreeOptions {
  /** "GPUMEM_RUN_MARK=value" as set in the child's environment; null = no marker check. */
  marker?: string | null;
  /** gpumem's own pid when it is a child subreaper: processes re-parented to it belong to the run. */
  adopter?: number | null;
  /** gpumem's own helpers that are its children too (the watchdog): never members. */
  exclude?: ReadonlySet<number>;
}

export interface TreeMember {
  pid: number;
  startTicks: number;
  comm: string;
  /** Single-letter state; '?' when /proc showed a letter this version does not know. */
  state: string;
  ppid: number;
}

export class ProcessTree {
  private readonly members = new Map<number, number>();
  private readonly everSeen = new Map<number, TreeMember>();
  private current: TreeMember[] = [];
  /** The child's start ticks: with `rootPid` they name the child, not a later process given its pid. */
  private rootStartTicks: number | null;
  /** Set once a scan finds no process in the group: a group id seen again later is a new group. */
  private groupEnded = false;

  /**
   * `rootPid` is the child; `pgid` its process group (the child leads its own group when spawned detached).
   * Construct it right after the spawn, before the event loop can reap the child: the child's start ticks
   * are read here (a child that already exited is still a zombie with its entry), and only when they
   * cannot be read is the first later sighting trusted instead.
   */
  /** The child's start ticks (null when they could not be read). */
  get startTicks(): number | null {
    return this.rootStartTicks;
  }

  /** Marker checks already made: pid → (start ticks, carries the marker). */
  private readonly markChecked = new Map<number, { startTicks: number; marked: boolean }>();

  constructor(
    readonly rootPid: number,
    readonly pgid: number,
    private readonly procRoot = '/proc',
    private readonly options: TreeOptions = {},
  ) {
    this.rootStartTicks = readProcStat(rootPid, { procRoot })?.startTicks ?? null;
  }

  /** True for a process that left the tree but carries the run's marker or was re-parented to gpumem. */
  private isEscapee(entry: ProcEntry): boolean {
    const { marker = null, adopter = null, exclude } = this.options;
    if (exclude?.has(entry.pid) || entry.pid === adopter) return false;
    // Only processes started since the child can carry its marker; older ones are never read.
    if (this.rootStartTicks === null || entry.startTicks < this.rootStartTicks) return false;
    if (adopter !== null && entry.ppid === adopter) return true;
    if (marker === null) return false;
    const known = this.markChecked.get(entry.pid);
    if (known && known.startTicks === entry.startTicks) return known.marked;
    const marked = readEnviron(entry.pid, { procRoot: this.procRoot })?.split('\0').includes(marker) === true;
    this.markChecked.set(entry.pid, { startTicks: entry.startTicks, marked });
    return marked;
  }

  /** True for the child itself or a process already known as a member — the same pid and start ticks. */
  private isOurs(entry: ProcEntry): boolean {
    if (entry.pid === this.rootPid) {
      this.rootStartTicks ??= entry.startTicks;
      if (entry.startTicks === this.rootStartTicks) return true;
    }
    return this.members.get(entry.pid) === entry.startTicks;
  }

  /**
   * Rescans /proc and returns the live members (zombies included, with state "Z"). Cost: one read of
   * /proc/PID/stat per process on the machine.
   */
  refresh(table: Map<number, ProcEntry> = readProcTable({ procRoot: this.procRoot })): TreeMember[] {
    const children = childrenByParent(table);
    const next = new Map<number, number>();
    const queue: number[] = [];
    const admit = (entry: ProcEntry): void => {
      if (next.has(entry.pid)) return;
      next.set(entry.pid, entry.startTicks);
      queue.push(entry.pid);
    };
    // The group is still the child's while its leader is absent or is ours: a live leader that is not
    // ours means the id was reused, and so does any group seen after one scan found it empty.
    const leader = table.get(this.pgid);
    let groupAlive = false;
    for (const entry of table.values()) if (entry.pgid === this.pgid) groupAlive = true;
    if (!groupAlive) this.groupEnded = true;
    const groupIsOurs = !this.groupEnded && (leader === undefined || this.isOurs(leader));
    for (const entry of table.values()) {
      if (this.isOurs(entry) || (groupIsOurs && entry.pgid === this.pgid) || this.isEscapee(entry)) admit(entry);
    }
    for (const pid of this.markChecked.keys()) if (!table.has(pid)) this.markChecked.delete(pid);
    while (queue.length > 0) {
      const pid = queue.pop() as number;
      for (const child of children.get(pid) ?? []) {
        const entry = table.get(child);
        if (entry) admit(entry);
      }
    }
    this.members.clear();
    this.current = [];
    for (const [pid, startTicks] of next) {
      this.members.set(pid, startTicks);
      const entry = table.get(pid) as ProcEntry;
      const member = { pid, startTicks, comm: entry.comm, state: entry.state ?? '?', ppid: entry.ppid };
      this.current.push(member);
      this.everSeen.set(pid, member);
    }
    return this.current;
  }

  /** Members found by the last refresh. */
  live(): TreeMember[] {
    return this.current;
  }

  /** Live members that are not zombies: the ones that can still hold GPU memory or need ending. */
  running(): TreeMember[] {
    return this.current.filter((m) => m.state !== 'Z' && m.state !== 'X');
  }

  /** True when `pid` is (or was, as the same process) a member; used to attribute GPU memory to the tree. */
  has(pid: number): boolean {
    return this.members.has(pid) || this.everSeen.has(pid);
  }

  /** Every process that was ever part of the tree. */
  seen(): TreeMember[] {
    return [...this.everSeen.values()];
  }
}
