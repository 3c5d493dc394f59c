"""Step-time overhead of the gpumem companion on a real GPU (needs CUDA and torch; not run in CI).

Trains a small MLP for a fixed number of steps three times in fresh processes: without the companion,
with it at 10 Hz, and with it at 50 Hz; each run reports its median step time. The companion runs
exactly as under `gpumem run` (its sitecustomize first on PYTHONPATH, a Unix socket drained by this script).
Also checks, in each companion run, that the streamed statistics equal torch.cuda.memory_stats() at the end.

    python3 bench/gpu/companion-overhead.py [--steps 3000] [--site DIR] [--fake-torch] [--out FILE.json]

--site: the folder with gpumem's sitecustomize.py (default python/_site; run-all.sh passes the staged copy that
`gpumem run` injects). --fake-torch: the fake torch of the tests instead of CUDA (a dry run of the plumbing; the
step times then mean nothing). Exits 1 when a companion run did not stream: no hello, no statistics, or a last
statistics message different from memory_stats. The child's stderr and every message type received are kept in
the JSON, so a run that measured nothing says why (the first H100 run printed "stats messages 0" and nothing
else: this script read the socket only at end of file and threw the child's stderr away).

Target: < 1 % median step-time overhead at 10 Hz on torch 2.11.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHILD = r"""
import json, sys, time, torch
steps = int(sys.argv[1])
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(2048, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 2048)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(256, 2048, device="cuda")
times = []
for i in range(steps):
    torch.cuda.synchronize(); t = time.perf_counter()
    loss = model(x).square().mean(); loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize(); times.append(time.perf_counter() - t)
s = torch.cuda.memory_stats(0)
print(json.dumps({"stepS": times[steps // 10:], "allocatedBytes": s["allocated_bytes.all.current"],
                  "reservedBytes": s["reserved_bytes.all.current"], "torch": torch.__version__}))
"""

# The same loop for the fake torch of the tests (no nn, no optimiser): each step allocates and frees like a
# training step's activations, with one tensor kept, so the allocator's statistics move every step.
CHILD_FAKE = r"""
import json, sys, time, torch
steps = int(sys.argv[1])
keep = torch.empty(1 << 20, device="cuda")
times = []
for i in range(steps):
    torch.cuda.synchronize(); t = time.perf_counter()
    act = [torch.empty((1 << 16) * (1 + i % 7), device="cuda") for _ in range(4)]
    del act
    time.sleep(0.002)
    torch.cuda.synchronize(); times.append(time.perf_counter() - t)
s = torch.cuda.memory_stats(0)
print(json.dumps({"stepS": times[steps // 10:], "allocatedBytes": s["allocated_bytes.all.current"],
                  "reservedBytes": s["reserved_bytes.all.current"], "torch": torch.__version__}))
"""
FAKE_TORCH = os.path.join(ROOT, "test", "python", "fake_torch_versions", "v2_11")


def listen():
    folder = tempfile.mkdtemp(prefix="gpumem-bench-")
    path = os.path.join(folder, "companion.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)
    received = []
    connected = threading.Event()

    def accept():
        # Messages are taken line by line as they arrive: a descendant that inherited the connection may keep it
        # open past the child's exit, and what was streamed must count even when end of file never comes.
        server.settimeout(120)
        try:
            conn, _ = server.accept()
        except OSError as exc:
            received.append({"type": "listener-error", "error": repr(exc)})
            return
        connected.set()
        buf = b""
        while True:
            data = conn.recv(1 << 16)
            if not data:
                break
            buf += data
            *lines, buf = buf.split(b"\n")
            for line in lines:
                if line.strip():
                    try:
                        received.append(json.loads(line))
                    except ValueError:
                        received.append({"type": "unreadable-line", "text": line[:200].decode("utf-8", "replace")})
        received.append({"type": "end-of-stream"})

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    return path, received, (thread, connected)


def run(steps, rate_hz, site, fake):
    env = dict(os.environ)
    received, thread = [], None
    path_entries = [FAKE_TORCH] if fake else []
    if rate_hz is not None:
        path, received, thread = listen()
        env["GPUMEM_COMPANION_CHANNEL"] = "unix:" + path
        env["GPUMEM_COMPANION_RATE_HZ"] = str(rate_hz)
        path_entries.insert(0, site)
    if path_entries:
        env["PYTHONPATH"] = os.pathsep.join(path_entries + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    proc = subprocess.run([sys.executable, "-c", CHILD_FAKE if fake else CHILD, str(steps)], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit("companion-overhead: the %s child failed (exit %d): %s" % (
            "companion" if rate_hz else "plain", proc.returncode, proc.stderr[-2000:]))
    if thread is not None:
        # The stream's end is waited for only when the companion connected: a child that never did has exited.
        thread[0].join(10 if thread[1].is_set() else 1)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["medianStepMs"] = statistics.median(result.pop("stepS")) * 1e3
    result["childStderr"] = proc.stderr[-4000:]
    if rate_hz is None:
        return result
    types = {}
    for m in list(received):
        types[m.get("type")] = types.get(m.get("type"), 0) + 1
    result["messages"] = types
    hello = next((m for m in received if m.get("type") == "hello"), None)
    result["hello"] = None if hello is None else {k: hello.get(k) for k in ("torchVersion", "companionVersion", "cuda", "config")}
    stats = [m for m in received if m.get("type") == "stats"]
    result["statsMessages"] = len(stats)
    result["streamMatches"] = None
    if stats:
        last = stats[-1]["devices"][0]
        result["streamMatches"] = (last["allocatedBytes"], last["reservedBytes"]) == (
            result["allocatedBytes"], result["reservedBytes"])
    problems = []
    if hello is None:
        problems.append("no hello: the companion never connected (child stderr: %r)" % result["childStderr"][-300:])
    elif not stats:
        problems.append("hello but no statistics (cuda: %r)" % (hello.get("cuda"),))
    elif not result["streamMatches"]:
        problems.append("the last statistics message differs from memory_stats at the end")
    result["problems"] = problems
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "companion-overhead.json"))
    parser.add_argument("--site", default=os.path.join(ROOT, "python", "_site"))
    parser.add_argument("--fake-torch", action="store_true")
    args = parser.parse_args()
    site = os.path.abspath(args.site)
    if not os.path.exists(os.path.join(site, "sitecustomize.py")):
        raise SystemExit("companion-overhead: no sitecustomize.py in %s (--site names gpumem's python/_site)" % site)
    started = time.time()
    runs = {name: run(args.steps, rate, site, args.fake_torch) for name, rate in (("without", None), ("10Hz", 10), ("50Hz", 50))}
    runs["meta"] = {"steps": args.steps, "site": site, "fakeTorch": args.fake_torch, "seconds": round(time.time() - started, 1)}
    base = runs["without"]["medianStepMs"]
    for name in ("10Hz", "50Hz"):
        runs[name]["overheadPct"] = (runs[name]["medianStepMs"] / base - 1) * 100
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as handle:
        json.dump(runs, handle, indent=2)
    for name in ("without", "10Hz", "50Hz"):
        r = runs[name]
        print("%-8s median step %.3f ms  overhead %s  stats messages %s  stream matches memory_stats: %s" % (
            name, r["medianStepMs"], "%.2f %%" % r["overheadPct"] if "overheadPct" in r else "-",
            r.get("statsMessages", "-"), r.get("streamMatches", "-")))
    problems = ["%s: %s" % (name, p) for name in ("10Hz", "50Hz") for p in runs[name]["problems"]]
    for p in problems:
        print("companion-overhead: " + p, file=sys.stderr)
    if problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
