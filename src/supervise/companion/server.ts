/**
 * The supervisor's end of the companion channel: a Unix socket in a private temporary folder, the
 * environment that tells the Python child where it is, and the per-pid state built from what arrives.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { CompanionState } from '../../core/companion/state.js';
import { admitCompanionMessage, createCompanionIntake, refuseForeign, type CompanionDrops, type CompanionIntake } from '../../core/companion/intake.js';
import { createLineSplitter, parseCompanionLine } from '../../core/companion/parse.js';
import type { CompanionMessage } from '../../core/companion/messages.js';
import { GpumemError, isGpumemError } from '../../core/errors.js';
import { isRunProcess } from './claimed-pid.js';
import { companionSiteDir, prependPythonPath } from './python-path.js';

export interface CompanionServerOptions {
  /** Statistics messages per second (default 10; 0 = only events and the final statistics). */
  rateHz?: number;
  /** Folder for OOM snapshots; null/undefined = no snapshot on OOM. */
  snapshotDir?: string | null;
  /** Bound on the allocation history kept for the snapshot (default 20000 entries). */
  snapshotMaxEntries?: number;
  /** Per-process memory fraction applied before the first allocation. */
  memoryFraction?: number | null;
  /** Per-step peaks for the OOM forecast (the allocator's peaks are reset every step); default on. */
  stepMemory?: boolean;
  /** CUDA_VISIBLE_DEVICES the child runs with, to name GPUs when torch cannot report UUIDs. */
  cudaVisibleDevices?: string | null;
  /** Called after each message is applied to the state (live view). */
  onMessage?: (message: CompanionMessage, state: CompanionState) => void;
  /** Parent folder of the private socket folder (default the OS temp folder). */
  tmpDir?: string;
  /**
   * Whether a pid a connection names is a process of the run (checked once per connection, at its first
   * message). Default: a descendant of gpumem, or a process whose environment holds this channel.
   */
  isRunProcess?: (pid: number) => boolean;
}

// sockaddr_un.sun_path holds 108 bytes on Linux; a longer TMPDIR falls back to /tmp.
const MAX_SOCKET_PATH = 100;

/** Problem lines kept (one per connection that sent bad lines); the rest are counted in the last one. */
const MAX_PROBLEMS = 32;

/** Connections open at once: one per Python process of the run, far below this. */
const MAX_CONNECTIONS = 1024;

/** A listening companion channel; `env()` for the child, `state` for what arrived, `close()` at the end. */
export class CompanionServer {
  private readonly intake: CompanionIntake = createCompanionIntake();
  readonly state: CompanionState = this.intake.state;
  /** Lines that could not be read, one entry per connection that sent any (the first problem, with a count). */
  readonly problems: string[] = [];
  private problemsNotKept = 0;
  private readonly sockets = new Set<Socket>();
  private closed = false;
  /** Pids the supervisor vouches for (its own child), believed without /proc: see vouchFor. */
  private readonly vouched = new Set<number>();
  /** What the run's process tree says of a pid (see vouchForMembers); null until the run starts. */
  private members: ((pid: number) => boolean) | null = null;

  private constructor(
    private readonly server: Server,
    private readonly dir: string,
    readonly socketPath: string,
    private readonly options: CompanionServerOptions,
  ) {}

  /** Creates the private folder and starts listening. Throws FAILED when the socket cannot be created. */
  static async start(options: CompanionServerOptions = {}): Promise<CompanionServer> {
    let parent = options.tmpDir ?? tmpdir();
    if (join(parent, 'gpumem-XXXXXX', 'companion.sock').length > MAX_SOCKET_PATH) parent = '/tmp';
    const dir = await mkdtemp(join(parent, 'gpumem-')); // mode 0700: only this user can connect
    const socketPath = join(dir, 'companion.sock');
    const server = createServer();
    server.maxConnections = MAX_CONNECTIONS;
    const instance = new CompanionServer(server, dir, socketPath, options);
    server.on('connection', (socket) => instance.accept(socket));
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(socketPath, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw new GpumemError('FAILED', `cannot open the companion channel at ${socketPath}`, {
        hint: 'check that the temporary folder is writable (TMPDIR), or run without the companion',
        cause: error,
      });
    }
    return instance;
  }

  /**
   * The variables to add to the child's environment: the channel, its settings, and PYTHONPATH with
   * gpumem's sitecustomize first and the user's own entries after it (never replaced).
   */
  env(base: Readonly<Record<string, string | undefined>>): Record<string, string> {
    const o = this.options;
    const vars: Record<string, string> = {
      GPUMEM_COMPANION_CHANNEL: `unix:${this.socketPath}`,
      GPUMEM_COMPANION_RATE_HZ: String(o.rateHz ?? 10),
      PYTHONPATH: prependPythonPath(companionSiteDir(), base.PYTHONPATH),
    };
    if (o.snapshotDir) vars.GPUMEM_COMPANION_SNAPSHOT_DIR = o.snapshotDir;
    if (o.snapshotMaxEntries !== undefined) vars.GPUMEM_COMPANION_SNAPSHOT_MAX_ENTRIES = String(o.snapshotMaxEntries);
    if (o.memoryFraction !== undefined && o.memoryFraction !== null) vars.GPUMEM_COMPANION_MEMORY_FRACTION = String(o.memoryFraction);
    if (o.stepMemory === false) vars.GPUMEM_COMPANION_STEP_MEMORY = '0';
    return vars;
  }

  /** Messages the channel delivered but the run did not keep, by reason (for the report). */
  get drops(): CompanionDrops {
    return this.intake.drops;
  }

  /** Problem lines beyond the ones kept in `problems`. */
  get problemsDropped(): number {
    return this.problemsNotKept;
  }

  /**
   * Believes messages naming `pid` (the run's own child, which the supervisor started). /proc can vouch for a
   * process only while it exists, and a short program's messages — an OOM report sent as it dies — can be
   * read after the child has been reaped: without this they would count as naming a pid outside the run.
   */
  vouchFor(pid: number): void {
    this.vouched.add(pid);
  }

  /**
   * Also believes the pids `wasMember` says the run's process tree held (its scans remember every member,
   * gone or not): a DataLoader worker or a rank that sent its last words and was reaped before they were read.
   */
  vouchForMembers(wasMember: (pid: number) => boolean): void {
    this.members = wasMember;
  }

  private belongs(pid: number): boolean {
    if (this.vouched.has(pid)) return true;
    const check = this.options.isRunProcess ?? ((p: number) => isRunProcess(p, `GPUMEM_COMPANION_CHANNEL=unix:${this.socketPath}`));
    return check(pid) || this.members?.(pid) === true;
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    const decoder = new StringDecoder('utf8');
    const lines = createLineSplitter();
    let lineNo = 0;
    let badLines = 0;
    let firstProblem = '';
    // One Python process per connection (a forked child never writes on its parent's): the first message
    // names the pid, checked once, and every later one must name the same.
    let connectionPid: number | null = null;
    let trusted = false;
    const handle = (batch: string[]): void => {
      for (const line of batch) {
        lineNo++;
        try {
          const message = parseCompanionLine(line, `companion channel, line ${lineNo}`);
          if (!message) continue;
          if (connectionPid === null) {
            connectionPid = message.pid;
            trusted = this.belongs(message.pid);
          }
          if (!trusted || message.pid !== connectionPid) {
            refuseForeign(this.intake);
            continue;
          }
          const kept = admitCompanionMessage(this.intake, message, this.options.cudaVisibleDevices ?? null);
          if (kept) this.options.onMessage?.(kept, this.state);
        } catch (error) {
          if (!isGpumemError(error)) throw error;
          badLines++;
          firstProblem ||= error.message;
        }
      }
    };
    socket.on('data', (chunk: Buffer) => handle(lines.push(decoder.write(chunk))));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      handle(lines.push(decoder.end()));
      handle(lines.end());
      if (badLines > 0) {
        if (this.problems.length < MAX_PROBLEMS) this.problems.push(badLines === 1 ? firstProblem : `${firstProblem} (and ${badLines - 1} more bad lines)`);
        else this.problemsNotKept++;
      }
      this.sockets.delete(socket);
    });
  }

  /**
   * Stops listening, gives open connections up to `drainMs` to finish (the child has usually exited and
   * only buffered lines remain), then removes the private folder. Safe to call twice.
   */
  async close(drainMs = 1000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const stopped = new Promise<void>((resolve) => this.server.close(() => resolve()));
    const deadline = Date.now() + drainMs;
    while (this.sockets.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    for (const socket of this.sockets) socket.destroy();
    await stopped;
    await rm(this.dir, { recursive: true, force: true });
  }
}
