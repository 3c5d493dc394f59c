"""Starting a job's ranks the way ``torch.multiprocessing.spawn`` does (join=True), for the rank test scripts."""
import os
import signal
import sys
import time


def run_ranks(procs):
    """Starts every rank; when one fails the others are ended (TERM) and the launcher exits 1."""
    for p in procs:
        p.start()
    failed = None
    while failed is None and any(p.is_alive() for p in procs):
        failed = next((p for p in procs if p.exitcode not in (None, 0)), None)
        time.sleep(0.02)
    failed = failed or next((p for p in procs if p.exitcode not in (None, 0)), None)
    if failed is not None:
        for p in procs:
            if p.is_alive():
                os.kill(p.pid, signal.SIGTERM)
        for p in procs:
            p.join()
        sys.exit(1)
    for p in procs:
        p.join()
