"""Compares `gpumem status --json` with nvidia-smi captured in the same moment (bench/gpu/run-all.sh, step
"truth"; issue 2 §7): every GPU's total/reserved/used/free within 1 MiB of both `nvidia-smi -q -x` and
`--query-gpu=memory.total,memory.reserved,memory.used,memory.free`, the same pids as
`--query-compute-apps`, each pid's memory within 1 MiB, and the holder process present.

    python3 compare_status.py --xml smi.xml --query-gpu q.csv --apps apps.csv --ours status.json \
        [--ours NAME=FILE ...] [--holder holder.json] --out compare.json

Needs only the standard library (it is also run in tests against recorded fixtures). Exit 0 when every
check passes, 1 otherwise.
"""
import argparse
import json
import sys
import xml.etree.ElementTree as ET

MiB = 1024 * 1024
FIELDS = ("totalBytes", "reservedBytes", "usedBytes", "freeBytes")


def mib_text(text):
    """'81559 MiB' -> bytes; None for [N/A] and the like."""
    if text is None:
        return None
    parts = text.strip().split()
    if len(parts) != 2 or parts[1] != "MiB" or not parts[0].isdigit():
        return None
    return int(parts[0]) * MiB


def read_xml(path):
    root = ET.parse(path).getroot()
    gpus, procs = [], []
    for gpu in root.findall("gpu"):
        uuid = (gpu.findtext("uuid") or "").strip()
        fb = gpu.find("fb_memory_usage")
        mem = {f: mib_text(fb.findtext(f.replace("Bytes", ""))) if fb is not None else None for f in FIELDS}
        gpus.append({"uuid": uuid, "name": (gpu.findtext("product_name") or "").strip(), "memory": mem})
        for p in gpu.findall("processes/process_info"):
            procs.append({"pid": int(p.findtext("pid")), "gpuUuid": uuid, "usedBytes": mib_text(p.findtext("used_memory"))})
    driver = (root.findtext("driver_version") or "").strip()
    cuda = (root.findtext("cuda_version") or "").strip()
    return {"driver": driver, "cuda": cuda, "gpus": gpus, "processes": procs}


def read_csv(path):
    rows = []
    with open(path) as handle:
        for line in handle:
            if line.strip():
                rows.append([c.strip() for c in line.split(",")])
    return rows


def num_mib(text):
    return int(text) * MiB if text.isdigit() else None


def check(checks, what, ours, truth, tolerance=MiB):
    ok = ours is not None and truth is not None and abs(ours - truth) <= tolerance
    checks.append({"check": what, "ours": ours, "truth": truth,
                   "diffBytes": None if ours is None or truth is None else ours - truth, "ok": ok})


def compare(ours, xml, query, apps, holder):
    checks = []
    devices = sorted(ours["devices"], key=lambda d: d["index"])
    if len(devices) != len(xml["gpus"]):
        checks.append({"check": "device count vs nvidia-smi -q -x", "ours": len(devices), "truth": len(xml["gpus"]), "ok": False})
    for d in devices:
        x = next((g for g in xml["gpus"] if g["uuid"] == d["uuid"]), None)
        for f in FIELDS:
            check(checks, f"gpu {d['index']} {f} vs -q -x", d["memory"].get(f), x["memory"][f] if x else None)
        row = query[d["index"]] if d["index"] < len(query) else None
        for i, f in enumerate(FIELDS):
            check(checks, f"gpu {d['index']} {f} vs --query-gpu", d["memory"].get(f), num_mib(row[i]) if row and len(row) > i else None)
    # --query-compute-apps=pid,gpu_uuid,used_memory
    truth_rows = {(int(r[0]), r[1]): num_mib(r[2]) for r in apps if len(r) >= 3 and r[0].isdigit()}
    our_rows = {(p["pid"], p["gpuUuid"]): p["usedBytes"] for p in ours["processes"] if p.get("kind", "compute") != "graphics"}
    same = set(truth_rows) == set(our_rows)
    checks.append({"check": "same (pid, gpu) rows as --query-compute-apps", "ours": sorted(map(list, our_rows)),
                   "truth": sorted(map(list, truth_rows)), "ok": same})
    for key in sorted(set(truth_rows) & set(our_rows)):
        check(checks, f"pid {key[0]} on {key[1]} usedBytes vs --query-compute-apps", our_rows[key], truth_rows[key])
    xml_pids = sorted({p["pid"] for p in xml["processes"]})
    checks.append({"check": "same pids as -q -x", "ours": sorted({p["pid"] for p in ours["processes"]}), "truth": xml_pids,
                   "ok": sorted({p["pid"] for p in ours["processes"]}) == xml_pids})
    split = None
    if holder:
        mine = [p for p in ours["processes"] if p["pid"] == holder["pid"]]
        # Informational: inside a container the driver reports host pids, so the holder's own pid may be absent
        # from both lists while they still agree with each other.
        split = {"holderPidListed": bool(mine)}
        if mine and mine[0]["usedBytes"] is not None:
            # What NVML charges the process beyond PyTorch's reserved pool: context, cuBLAS/cuDNN workspaces.
            split = {"holderPidListed": True, "processUsedBytes": mine[0]["usedBytes"], "torchReservedBytes": holder["reservedBytes"],
                     "torchAllocatedBytes": holder["allocatedBytes"],
                     "nonPytorchBytes": mine[0]["usedBytes"] - holder["reservedBytes"]}
            checks.append({"check": "holder: NVML process memory >= torch reserved", "ours": mine[0]["usedBytes"],
                           "truth": holder["reservedBytes"], "ok": mine[0]["usedBytes"] >= holder["reservedBytes"]})
    return checks, split


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--xml", required=True)
    ap.add_argument("--query-gpu", required=True)
    ap.add_argument("--apps", required=True)
    ap.add_argument("--ours", action="append", required=True, help="status JSON, or NAME=FILE (repeatable)")
    ap.add_argument("--holder")
    ap.add_argument("--out")
    a = ap.parse_args()
    xml = read_xml(a.xml)
    query, apps = read_csv(a.query_gpu), read_csv(a.apps)
    holder = json.load(open(a.holder)) if a.holder else None
    result = {"schemaVersion": 1, "kind": "gpumem.gpu-check.status-compare", "toleranceBytes": MiB,
              "driver": xml["driver"], "cuda": xml["cuda"], "gpus": [g["name"] for g in xml["gpus"]],
              "holder": holder, "sources": {}}
    all_ok = True
    for spec in a.ours:
        name, _, path = spec.rpartition("=")
        ours = json.load(open(path))
        checks, split = compare(ours, xml, query, apps, holder)
        ok = all(c["ok"] for c in checks)
        all_ok = all_ok and ok
        result["sources"][name or ours.get("source", {}).get("kind", path)] = {
            "file": path, "source": ours.get("source"), "ok": ok, "pytorchSplit": split, "checks": checks}
        for c in checks:
            if not c["ok"]:
                print(f"MISMATCH [{name or path}] {c['check']}: ours {c['ours']} vs {c['truth']}", file=sys.stderr)
    result["ok"] = all_ok
    text = json.dumps(result, indent=2)
    if a.out:
        with open(a.out, "w") as handle:
            handle.write(text + "\n")
    print(("OK" if all_ok else "MISMATCH") + f": {sum(len(s['checks']) for s in result['sources'].values())} checks over "
          f"{len(result['sources'])} source(s), tolerance 1 MiB")
    sys.exit(0 if all_ok else 1)


if __name__ == "__main__":
    main()
