/** Options of the commands that read the GPUs: doctor, diagnose, status, record, kill (format: cli/spec.ts). */
import { defineCommand, type OptionTable } from '../spec.js';
import { JSON_TABLE, MAX_MS, SOURCE_TABLE, type JsonOption, type SourceOptions } from './shared.js';

export interface DiagnoseOptions extends JsonOption, SourceOptions {
  window: number;
}

/** Sampling window of doctor and diagnose. */
const DIAGNOSE_TABLE = {
  window: { type: 'number', value: 'SECONDS', min: 0, max: 3600, default: 3, noun: 'a number of seconds', description: 'sample the GPUs for this long so utilisation and idleness are measured (0: one sample)' },
  ...JSON_TABLE,
  ...SOURCE_TABLE,
} satisfies OptionTable<DiagnoseOptions>;

export interface DoctorOptions extends DiagnoseOptions {
  exitCode: boolean;
}

export const DOCTOR = defineCommand<DoctorOptions>({
  name: 'doctor',
  summary: 'GPU status and findings in one screen (the default command)',
  usage: 'doctor [options]',
  description:
    'The status table (GPUs, their processes with user, memory, age, utilisation over the window and role) and every finding of `gpumem diagnose`, one line of fix each. Without any GPU access (no driver) it shows the bundled example recording and says so in its first line; with --json it exits 3 instead, so no script reads the example as this machine. See docs/diagnose.md.',
  options: {
    ...DIAGNOSE_TABLE,
    exitCode: { type: 'boolean', description: 'exit 1 on any finding, warnings and notes included (without it only a critical finding does), for scripts that stop on any' },
  },
  examples: ['gpumem', 'gpumem doctor --window 10', 'gpumem doctor --replay examples/doctor-example.ndjson', 'gpumem doctor --exit-code && ./train.sh'],
  exits: ['1 when a finding is critical, 0 when the findings are only warnings and notes (in `&&` chains a healthy-enough machine goes on); with --exit-code, 1 on any finding'],
});

export const DIAGNOSE = defineCommand<DiagnoseOptions>({
  name: 'diagnose',
  summary: 'account for every byte on every GPU and name what is wrong, with evidence and fixes',
  usage: 'diagnose [options]',
  description:
    'Samples the GPUs over a window (default 3 s; with --replay the whole recording is the window) and accounts per GPU: used = processes visible here + processes not visible in this PID namespace + unattributed, with driver-reserved memory beside it; processes grouped into trees (launcher → ranks → DataLoader workers) with totals per tree and per user. Then runs every rule (duplicate runs, workers holding CUDA contexts, other users, idle notebook kernels, orphans, zombies, vanished pids, wrong GPU, device order, idle or input-bound jobs, allocator config, memory near capacity) and lists findings by severity with the numbers and a fix. See docs/diagnose.md.',
  options: DIAGNOSE_TABLE,
  examples: ['gpumem diagnose', 'gpumem diagnose --window 10 --json', 'gpumem diagnose --replay examples/doctor-example.ndjson'],
  exits: ['1 when there are findings, 0 when there are none'],
});

export interface StatusOptions extends JsonOption, SourceOptions {
  watch: boolean;
  interval: number;
}

export const STATUS = defineCommand<StatusOptions>({
  name: 'status',
  summary: 'GPUs and the processes using them',
  usage: 'status [options]',
  description:
    'One row per GPU (memory used/total with the driver-reserved part, utilisation, temperature, power) and under it the processes on it: pid, user, GPU memory, age, command, container, and a marker for pids that do not exist in this PID namespace (host pids seen from a container). Sizes match nvidia-smi to the MiB. See docs/status.md for the --json schema.',
  options: {
    ...JSON_TABLE,
    watch: { short: 'w', type: 'boolean', description: 'refresh until Ctrl-C (a recording: until it ends)' },
    interval: { type: 'number', value: 'MS', integer: true, min: 50, max: MAX_MS, default: 2000, description: 'refresh interval for --watch, in milliseconds' },
    ...SOURCE_TABLE,
  },
  examples: ['gpumem status', 'gpumem status --json', 'gpumem status --watch --interval 1000', 'gpumem status --replay run.gpumem.ndjson'],
  aliases: ['info'],
  exits: ['3 when no GPU can be read (no NVML, no nvidia-smi)'],
});

export interface RecordOptions extends SourceOptions {
  out: string | undefined;
  interval: number;
  duration: number | undefined;
  note: string | undefined;
}

export const RECORD = defineCommand<RecordOptions>({
  name: 'record',
  summary: 'record GPU state to a file that any command can read with --replay',
  usage: 'record --out FILE [options]',
  description:
    'Writes a versioned NDJSON recording: a header line (format, version, host, note), then one sample (all GPUs and their processes with host facts) per line: a whole sample every 10 minutes, and in between only what changed since the sample before (about 8 MB an hour at 1 Hz on 8 GPUs × 64 processes). Stops after --duration or at Ctrl-C; every sample written before is kept. See docs/recording.md.',
  options: {
    out: { short: 'o', type: 'string', path: true, value: 'FILE', description: 'the recording to write (a file of yours there is replaced; a link or another user\'s file is refused)' },
    interval: { type: 'number', value: 'MS', integer: true, min: 10, max: MAX_MS, default: 1000, description: 'time between samples, in milliseconds' },
    duration: { type: 'number', value: 'S', min: 0, max: 31_536_000, noun: 'a number of seconds', description: 'stop after this many seconds (default: until Ctrl-C)' },
    note: { type: 'string', value: 'TEXT', allowEmpty: true, description: 'free text stored in the header (what was running)' },
    ...SOURCE_TABLE,
  },
  examples: ['gpumem record --out train.gpumem.ndjson --interval 500 --duration 600', 'gpumem status --replay train.gpumem.ndjson'],
  exits: ['3 when no GPU can be read'],
});

export interface KillOptions extends JsonOption, SourceOptions {
  gpu: string[] | undefined;
  orphans: boolean;
  zombieHolders: boolean;
  user: string | undefined;
  olderThan: string | undefined;
  idle: boolean;
  yes: boolean;
  dryRun: boolean;
  allUsers: boolean;
  graceMs: number;
}

export const KILL = defineCommand<KillOptions>({
  name: 'kill',
  summary: 'end stale GPU processes safely (TERM, grace, KILL; pid reuse checked)',
  usage: 'kill [options] [PID…]',
  description:
    'Selects GPU processes by pid and/or filters, shows what it will do and asks on a terminal. Only your own processes unless you are root and give --all-users. Right before each signal the pid\'s start time is re-read and compared, and the pid must still be on that GPU; otherwise it is skipped with the reason. Never pid 1, gpumem itself or its ancestors. See docs/kill.md.',
  args: [{ name: 'PID', description: 'process ids to end (must be GPU processes)', variadic: true }],
  options: {
    gpu: { type: 'list', value: 'INDEX', description: 'processes on these GPUs (index or UUID; repeatable or comma-separated)' },
    orphans: { type: 'boolean', description: 'processes whose parent died (re-parented to init) and that did nothing during a one-second check (a computing nohup job is not an orphan)' },
    zombieHolders: { type: 'boolean', description: 'processes that hold GPU memory while a zombie or while stopped (T)' },
    user: { type: 'string', value: 'NAME', description: 'processes of this user (others than you need root and --all-users)' },
    olderThan: { type: 'string', value: 'DURATION', description: 'processes started longer ago than this (e.g. 30m, 2h, 1d)' },
    idle: { type: 'boolean', description: 'jobs idle as a whole: every GPU process at 0% SM and no member of the job (DataLoader workers included) using the CPU in a one-second check; an idle job is selected whole, a job with any busy member not at all' },
    yes: { short: 'y', type: 'boolean', description: 'do not ask' },
    dryRun: { type: 'boolean', description: 'only show what would be done' },
    allUsers: { type: 'boolean', description: 'allow other users\' processes (root only)' },
    graceMs: { type: 'number', value: 'MS', integer: true, min: 0, max: MAX_MS, default: 5000, description: 'wait between TERM and KILL' },
    ...JSON_TABLE,
    ...SOURCE_TABLE,
  },
  examples: ['gpumem kill --gpu 0 --orphans --dry-run', 'gpumem kill 12345 --yes'],
  exits: ['1 when a process could not be ended'],
});

export interface WatchOptions extends SourceOptions {
  interval: number;
  readonly: boolean;
  allUsers: boolean;
  graceMs: number;
  speed: number;
}

export const WATCH = defineCommand<WatchOptions>({
  name: 'watch',
  summary: 'live terminal view of GPU memory: who holds it, is it growing, what to fix',
  usage: 'watch [options]',
  description:
    'A full-screen view that refreshes in place: per GPU a memory bar split into PyTorch allocated / cached (runs under `gpumem run`), your other processes, other users, processes not visible here, unattributed and driver-reserved memory, with utilisation, temperature, power and a sparkline of used memory; the processes as trees (launcher, ranks, DataLoader workers) with memory, trend, SM share, CPU %, host RSS, age and command; the top finding with its fix. Keys: ↑/↓ select, Enter shows a process\'s memory, utilisation and step history, s/m/p/u/g sort, / filters, K ends the selected process (same checks as `gpumem kill`), space pauses, +/- change replay speed, ←/→ jump in a replay, ? help, q quits. See docs/watch.md.',
  options: {
    interval: { type: 'number', value: 'MS', integer: true, min: 50, max: MAX_MS, default: 1000, description: 'time between live samples, in milliseconds (a replay plays at the pace it was recorded, × --speed)' },
    readonly: { type: 'boolean', description: 'switch actions (ending processes) off' },
    allUsers: { type: 'boolean', description: 'allow ending other users\' processes (root only)' },
    graceMs: { type: 'number', value: 'MS', integer: true, min: 0, max: MAX_MS, default: 5000, description: 'wait between TERM and KILL when ending a process' },
    speed: { type: 'number', value: 'X', min: 0.0625, max: 64, default: 1, noun: 'a speed factor', description: 'replay speed (also + and - while playing)' },
    ...SOURCE_TABLE,
  },
  examples: ['gpumem watch', 'gpumem watch --interval 200 --readonly', 'gpumem watch --replay examples/doctor-example.ndjson --speed 4'],
  aliases: ['monitor'],
  exits: ['2 when stdout is not a terminal', '3 when no GPU can be read'],
});
