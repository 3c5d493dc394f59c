/**
 * The watchdog's program: `node --inspect-port=… watchdog-main.js MARKER GRACE_MS`, started by watchdog.ts
 * once per supervised run. Like bin.ts, its first instruction keeps SIGUSR1 from opening Node's debugger
 * (signal-guard.ts says why) and SIGUSR2 from ending it; the loop comes in by a dynamic import after that.
 * It loads only the guard, the loop and the /proc stat reader, so it is running before the command starts.
 */
// Straight to the file, not through supervise/index.ts: nothing else may load before the guard is in place.
import { guardDebuggerSignals } from './signal-guard.js';

guardDebuggerSignals();

const { watchStdin } = await import('./watchdog-loop.js');
const [marker = '', graceText = ''] = process.argv.slice(2);
watchStdin(process.stdin, { marker, graceMs: Number(graceText), selfPid: process.pid });
