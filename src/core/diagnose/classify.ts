/**
 * What a command line says about a process: a Jupyter/IPython kernel, a distributed launcher, a
 * multiprocessing child, a Python interpreter. Plain string checks on argv; no guessing beyond what the
 * command line shows.
 */

const basename = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/** Verdicts by argv: a live view classifies the same command line (one array per process) every sample. */
const kernelVerdicts = new WeakMap<readonly string[], boolean>();

/** True for Jupyter/IPython kernels: `python -m ipykernel_launcher -f …`, `ipykernel`, `ipython`, `jupyter-kernel`. */
export function isKernelCommand(argv: readonly string[] | null): boolean {
  if (!argv || argv.length === 0) return false;
  let verdict = kernelVerdicts.get(argv);
  if (verdict === undefined) {
    verdict = kernelArgv(argv);
    kernelVerdicts.set(argv, verdict);
  }
  return verdict;
}

function kernelArgv(argv: readonly string[]): boolean {
  return argv.some((arg, i) => {
    const base = basename(arg);
    if (/^ipykernel(_launcher)?(\.py)?$/.test(base) || /^jupyter-kernel/.test(base)) return true;
    if (i === 0 || (i === 1 && /^python/.test(basename(argv[0] ?? '')))) return /^ipython\d*$/.test(base);
    return false;
  });
}

/** The launcher a command line belongs to, when it is one: torchrun, accelerate, deepspeed, torch.distributed.launch/run. */
export function launcherName(argv: readonly string[] | null): string | null {
  if (!argv || argv.length === 0) return null;
  const first = basename(argv[0] ?? '');
  const second = basename(argv[1] ?? '');
  if (first === 'torchrun' || (/^python/.test(first) && second === 'torchrun')) return 'torchrun';
  if (first === 'accelerate' || (/^python/.test(first) && second === 'accelerate')) return 'accelerate';
  if (first === 'deepspeed' || (/^python/.test(first) && second === 'deepspeed')) return 'deepspeed';
  const m = argv.indexOf('-m');
  const module = m >= 0 ? argv[m + 1] : undefined;
  if (module === 'torch.distributed.run' || module === 'torch.distributed.launch') return 'torchrun';
  if (module === 'accelerate.commands.launch') return 'accelerate';
  if (module === 'deepspeed.launcher.runner' || module === 'deepspeed.launcher.launch') return 'deepspeed';
  return null;
}

/** True for children that Python's multiprocessing started with spawn/forkserver (their argv says so). */
export function isMultiprocessingChild(argv: readonly string[] | null): boolean {
  if (!argv) return false;
  return argv.some((a) => a === '--multiprocessing-fork' || a.includes('multiprocessing.spawn') || a.includes('multiprocessing.forkserver'));
}

/** True when the interpreter is Python (argv[0] or the executable is python*). */
export function isPythonCommand(argv: readonly string[] | null, exe: string | null = null): boolean {
  const first = argv?.[0] ? basename(argv[0]) : '';
  return /^python(\d+(\.\d+)*)?$/.test(first) || (exe !== null && /^python(\d+(\.\d+)*)?$/.test(basename(exe)));
}

/** Process managers that adopt orphans: pid 1 in most systems and containers, or a user-session subreaper. */
export function isReaperCommand(argv: readonly string[] | null): boolean {
  if (!argv || argv.length === 0) return false;
  const first = basename(argv[0] ?? '');
  return /^(systemd|init|tini|dumb-init|catatonit|docker-init|s6-svscan|s6-supervise|runsv|supervisord|containerd-shim.*)$/.test(first);
}

/** The command as one line, for display and for comparing two processes' commands. */
export function commandText(argv: readonly string[] | null, fallbackName: string | null): string | null {
  if (!argv || argv.length === 0) return fallbackName;
  // The same argv (one array per process while it lives) is joined once, not once per sample.
  let text = joinedCommands.get(argv);
  if (text === undefined) {
    text = argv.join(' ');
    joinedCommands.set(argv, text);
  }
  return text;
}

const joinedCommands = new WeakMap<readonly string[], string>();

/** True for shells (a login shell's argv[0] starts with '-'). */
export function isShell(argv: readonly string[] | null): boolean {
  const first = basename(argv?.[0] ?? '').replace(/^-/, '');
  return /^(ba|z|da|fi|k|tc|c|a)?sh$/.test(first);
}
