/**
 * Keeps SIGUSR1 from opening a debugger. Node answers SIGUSR1 by starting its inspector on 127.0.0.1:9229,
 * which has no authentication: any local user could then run code as gpumem's user (root, often), and
 * schedulers send exactly this signal (Slurm's --signal=USR1 before a time limit). A JavaScript listener
 * replaces Node's own handler, so this module installs one for SIGUSR1 (and SIGUSR2, whose default would end
 * gpumem) as the first instruction of bin.ts, before the rest of gpumem is even loaded. Commands with a
 * child (`run`, `pipeline`) add listeners that forward the signal; every other command ignores it.
 *
 * The milliseconds of Node's own start-up before this runs are covered by the launcher line of bin.ts, which
 * points the inspector at an address no host owns (see INSPECTOR_NOWHERE). This module imports nothing: it
 * must be evaluated before the module graph of the commands is loaded.
 */

/**
 * Where an inspector started during Node's start-up would try to listen: 192.0.2.1 is TEST-NET-1 (RFC 5737),
 * reserved for documentation and never assigned to a host, so binding it fails ("address not available")
 * and no port opens. Passed to every Node process gpumem starts of its own (its watchdog).
 */
export const INSPECTOR_NOWHERE = '--inspect-port=192.0.2.1:9229';

const ignore = (): void => undefined;

/** Installs the no-op SIGUSR1/SIGUSR2 listeners that keep Node's debugger signal from doing anything. */
export function guardDebuggerSignals(): void {
  process.on('SIGUSR1', ignore);
  process.on('SIGUSR2', ignore);
}
