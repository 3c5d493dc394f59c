"""Stand-ins for a training job's processes, started the way PyTorch starts them: DataLoader workers are
multiprocessing children (fork: the parent's own argv; spawn: `from multiprocessing.spawn import spawn_main`
and `--multiprocessing-fork` in argv), as torch.utils.data.DataLoader makes them from its
multiprocessing_context; ranks get RANK / LOCAL_RANK / WORLD_SIZE from their launcher (./torchrun). Every
process opens its GPU's stand-in device node, GPUMEM_TEST_DEVICE_PREFIX + index, as CUDA opens /dev/nvidiaN.
Prints one JSON line with its pids once every worker is up, then waits.

  job.py trainer fork|spawn GPU [busy]   a trainer with 2 workers; `busy`: worker 1 works on the CPU
  job.py rank                            a rank (its GPU is LOCAL_RANK) with 2 spawn workers
"""
import json, multiprocessing as mp, os, sys, time

_held = []


def hold_device(gpu):
    _held.append(open(os.environ["GPUMEM_TEST_DEVICE_PREFIX"] + str(gpu), "a"))


def wait(busy):
    # A light, steady load (about a third of a core): enough CPU ticks per second to show, little to share.
    while True:
        if busy:
            t = time.time()
            while time.time() - t < 0.03:
                pass
            time.sleep(0.07)
        else:
            time.sleep(1)


def worker(gpu, busy, ready):
    hold_device(gpu)
    ready.set()
    wait(busy)


def start_workers(method, gpu, busy_index):
    ctx = mp.get_context(method)
    workers = []
    for i in range(2):
        ready = ctx.Event()
        p = ctx.Process(target=worker, args=(gpu, i == busy_index, ready), daemon=True)
        p.start()
        workers.append((p, ready))
    for p, ready in workers:
        ready.wait(30)
    return [p.pid for p, _ in workers]


def main():
    mode = sys.argv[1]
    if mode == "trainer":
        method, gpu = sys.argv[2], int(sys.argv[3])
        busy = len(sys.argv) > 4 and sys.argv[4] == "busy"
        hold_device(gpu)
        workers = start_workers(method, gpu, 1 if busy else -1)
        print(json.dumps({"pid": os.getpid(), "workers": workers}), flush=True)
    else:
        gpu = int(os.environ["LOCAL_RANK"])
        hold_device(gpu)
        workers = start_workers("spawn", gpu, -1)
        print(json.dumps({"pid": os.getpid(), "rank": gpu, "workers": workers}), flush=True)
    wait(False)


if __name__ == "__main__":
    main()
