"""For the rank test scripts: starting the ranks as ``torch.multiprocessing.spawn`` does (join=True), and claims on
the GPU double."""
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


def claim(gpu, nbytes):
    """Tells the test's GPU double (a claim file in GPUMEM_TEST_CLAIMS) that this process holds `nbytes` on `gpu`."""
    folder = os.environ.get("GPUMEM_TEST_CLAIMS")
    if not folder:
        return
    path = os.path.join(folder, "%d-%d" % (os.getpid(), gpu))
    with open(path + ".tmp", "w") as f:
        f.write(str(nbytes))
    os.replace(path + ".tmp", path)
