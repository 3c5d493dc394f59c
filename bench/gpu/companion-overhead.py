"""Step-time overhead of the gpumem companion on a real GPU (needs CUDA and torch; not run in CI).

Trains a small MLP for a fixed number of steps three times in fresh processes: without the companion,
with it at 10 Hz, and with it at 50 Hz; each run reports its median step time. The companion runs
exactly as under `gpumem run` (sitecustomize on PYTHONPATH, a Unix socket drained by this script).
Also checks, in the 10 Hz run, that the streamed statistics equal torch.cuda.memory_stats() at the end.

    python3 bench/gpu/companion-overhead.py [--steps 3000] [--out bench/results/companion-overhead.json]

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


def listen():
    folder = tempfile.mkdtemp(prefix="gpumem-bench-")
    path = os.path.join(folder, "companion.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)
    received = []

    def accept():
        conn, _ = server.accept()
        buf = b""
        while True:
            data = conn.recv(1 << 16)
            if not data:
                break
            buf += data
        received.extend(json.loads(l) for l in buf.decode().splitlines() if l.strip())

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    return path, received, thread


def run(steps, rate_hz):
    env = dict(os.environ)
    received, thread = [], None
    if rate_hz is not None:
        path, received, thread = listen()
        env["GPUMEM_COMPANION_CHANNEL"] = "unix:" + path
        env["GPUMEM_COMPANION_RATE_HZ"] = str(rate_hz)
        env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python", "_site"), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-c", CHILD, str(steps)], env=env, capture_output=True, text=True, check=True)
    if thread is not None:
        thread.join(10)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["medianStepMs"] = statistics.median(result.pop("stepS")) * 1e3
    stats = [m for m in received if m.get("type") == "stats"]
    result["statsMessages"] = len(stats)
    if stats:
        last = stats[-1]["devices"][0]
        result["streamMatches"] = (last["allocatedBytes"], last["reservedBytes"]) == (
            result["allocatedBytes"], result["reservedBytes"])
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "companion-overhead.json"))
    args = parser.parse_args()
    runs = {"without": run(args.steps, None), "10Hz": run(args.steps, 10), "50Hz": run(args.steps, 50)}
    base = runs["without"]["medianStepMs"]
    for name in ("10Hz", "50Hz"):
        runs[name]["overheadPct"] = (runs[name]["medianStepMs"] / base - 1) * 100
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as handle:
        json.dump(runs, handle, indent=2)
    for name, r in runs.items():
        print("%-8s median step %.3f ms  overhead %s  stats messages %d  stream matches memory_stats: %s" % (
            name, r["medianStepMs"], "%.2f %%" % r["overheadPct"] if "overheadPct" in r else "-",
            r["statsMessages"], r.get("streamMatches", "-")))


if __name__ == "__main__":
    main()
