/** Ctrl-C handling for loops (status --watch, record): the first SIGINT/SIGTERM ends the loop cleanly. */

export interface StopFlag {
  (): boolean;
  /** Waits `ms`, returning early when stopped. */
  sleep(ms: number): Promise<void>;
}

/**
 * Runs `loop` with a stop flag that turns true on SIGINT or SIGTERM, so the loop can finish what it is
 * writing and return normally; handlers are removed afterwards.
 */
export async function untilInterrupted(loop: (stopped: StopFlag) => Promise<void>): Promise<void> {
  let stop = false;
  let wake: (() => void) | null = null;
  const onSignal = (): void => {
    stop = true;
    wake?.();
  };
  const flag = (() => stop) as StopFlag;
  flag.sleep = (ms) =>
    new Promise<void>((resolve) => {
      if (stop) return resolve();
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await loop(flag);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
