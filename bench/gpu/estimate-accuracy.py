#!/usr/bin/env python3
"""
Accuracy benchmark for `gpumem estimate` and `gpumem fit` on a real NVIDIA GPU (needs torch, torchvision,
transformers). For each config it trains a few steps with random weights, measures the peak
(torch.cuda.max_memory_reserved + the CUDA context, and the process's NVML memory from nvidia-smi), asks
`gpumem estimate --json` for the same setup, and prints the error next to the peers: accelerate's rule
(16 B/param fp32, 8 B/param mixed; weights-only "Training using Adam") and DeepSpeed's model-states formula
(2P + 18P/N, N = 1). Then `gpumem fit` on GPT-2 small: runs used, batch found vs the true maximum (found by
bisection here), and 200 steps at the found batch without OOM.

Usage: python3 estimate-accuracy.py --gpumem "node dist/cli/bin.js" --out results.json [--quick]
       python3 estimate-accuracy.py --train CONFIG_JSON --batch B --steps S   (one training run; used by fit)
"""
import argparse, json, os, shlex, statistics, subprocess, sys, tempfile, time

CONFIGS = [
    # name, family, precision, optimizer, freeze, batch, seq/image
    ("resnet50-fp32-adamw-full", "resnet50", "fp32", "adamw", None, 64, 224),
    ("resnet50-amp-sgd-full", "resnet50", "amp-bf16", "sgd-momentum", None, 128, 224),
    ("resnet50-fp32-adamw-frozen", "resnet50", "fp32", "adamw", "backbone", 64, 224),
    ("vit-b16-fp32-adamw-full", "vit", "fp32", "adamw", None, 32, 197),
    ("vit-b16-amp-adamw-full", "vit", "amp-bf16", "adamw", None, 64, 197),
    ("vit-b16-amp-adamw-frozen", "vit", "amp-bf16", "adamw", "vit.embeddings+vit.encoder.layer.0+vit.encoder.layer.1+vit.encoder.layer.2+vit.encoder.layer.3+vit.encoder.layer.4+vit.encoder.layer.5", 64, 197),
    ("bert-base-fp32-adamw-full", "bert", "fp32", "adamw", None, 16, 512),
    ("bert-base-amp-sgd-full", "bert", "amp-bf16", "sgd-momentum", None, 32, 512),
    ("gpt2-fp32-adamw-full", "gpt2", "fp32", "adamw", None, 8, 1024),
    ("gpt2-amp-adamw-full", "gpt2", "amp-bf16", "adamw", None, 16, 1024),
    ("gpt2-medium-amp-adamw-full", "gpt2-medium", "amp-bf16", "adamw", None, 8, 1024),
    ("gpt2-medium-amp-sgd-frozen", "gpt2-medium", "amp-bf16", "sgd-momentum", "transformer.wte+transformer.wpe+" + "+".join(f"transformer.h.{i}" for i in range(12)), 8, 1024),
    ("llama-1b-amp-adamw-full", "llama-1b", "amp-bf16", "adamw", None, 4, 2048),
    ("llama-1b-bf16-adamw-full", "llama-1b", "bf16", "adamw", None, 4, 2048),
]

HF = {
    "vit": {"model_type": "vit", "architectures": ["ViTForImageClassification"], "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072, "image_size": 224, "patch_size": 16, "num_channels": 3, "num_labels": 1000, "hidden_dropout_prob": 0.0},
    "bert": {"model_type": "bert", "architectures": ["BertForMaskedLM"], "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072, "vocab_size": 30522, "max_position_embeddings": 512, "type_vocab_size": 2},
    "gpt2": {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024},
    "gpt2-medium": {"model_type": "gpt2", "n_embd": 1024, "n_layer": 24, "n_head": 16, "vocab_size": 50257, "n_positions": 1024},
    "llama-1b": {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256, "max_position_embeddings": 2048, "tie_word_embeddings": True},
}


def nvml_process_bytes():
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        pid, mib = [x.strip() for x in line.split(",")]
        if int(pid) == os.getpid():
            return int(mib) * 1024 * 1024
    return None


def build(family, freeze):
    import torch
    if family == "resnet50":
        import torchvision
        model = torchvision.models.resnet50()
        if freeze:
            for n, p in model.named_parameters():
                if not n.startswith("fc."):
                    p.requires_grad_(False)
        return model, "image"
    import transformers
    cfg = transformers.AutoConfig.for_model(**{k: v for k, v in HF[family].items() if k != "architectures"})
    arch = HF[family].get("architectures", [None])[0]
    model = getattr(transformers, arch)(cfg) if arch else transformers.AutoModelForCausalLM.from_config(cfg)
    if freeze:
        prefixes = freeze.split("+")
        for n, p in model.named_parameters():
            if any(n == x or n.startswith(x + ".") for x in prefixes):
                p.requires_grad_(False)
    return model, "image" if family == "vit" else "tokens"


def train(family, precision, optimizer, freeze, batch, seq, steps):
    """Trains `steps` steps; returns measured peaks (bytes)."""
    import torch
    torch.cuda.reset_peak_memory_stats()
    model, kind = build(family, freeze)
    model = model.cuda()
    if precision == "bf16":
        model = model.to(torch.bfloat16)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4) if optimizer == "adamw" else torch.optim.SGD(params, lr=1e-3, momentum=0.9)
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    for _ in range(steps):
        if kind == "image":
            x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype)
            y = torch.randint(0, 1000, (batch,), device="cuda")
        else:
            vocab = HF[family]["vocab_size"]
            x = torch.randint(0, vocab, (batch, seq), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision.startswith("amp")):
            if family == "resnet50":
                loss = torch.nn.functional.cross_entropy(model(x), y)
            elif family == "vit":
                loss = model(pixel_values=x, labels=y).loss
            else:
                loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    return {"reservedBytes": torch.cuda.max_memory_reserved(), "allocatedBytes": torch.cuda.max_memory_allocated(), "nvmlBytes": nvml_process_bytes()}


def child_measure(name, family, precision, optimizer, freeze, batch, seq):
    """Each config in a fresh process so allocator state and context are clean."""
    cmd = [sys.executable, __file__, "--measure", json.dumps([family, precision, optimizer, freeze, batch, seq])]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": r.stderr[-400:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def estimate(gpumem, family, precision, optimizer, freeze, batch, seq, act_per_sample, tmp):
    args = shlex.split(gpumem) + ["estimate", "--json", "--precision", precision, "--optimizer", optimizer, "--batch", str(batch)]
    if family == "resnet50":
        args += ["--params", "25557032", "--activation-bytes-per-sample", str(act_per_sample)]
    else:
        path = os.path.join(tmp, f"{family}.json")
        json.dump(HF[family], open(path, "w"))
        args += [path, "--seq", str(seq)]
    if freeze:
        args += ["--freeze", freeze.replace("+", ",")]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        return None, r.stderr
    j = json.loads(r.stdout)
    return j["peak"]["totalBytes"], j


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumem", default="node dist/cli/bin.js")
    ap.add_argument("--out")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--measure")
    ap.add_argument("--train")
    ap.add_argument("--batch", type=int)
    ap.add_argument("--steps", type=int, default=int(os.environ.get("GPUMEM_STEPS", "5")))
    a = ap.parse_args()
    if a.measure:
        family, precision, optimizer, freeze, batch, seq = json.loads(a.measure)
        print(json.dumps(train(family, precision, optimizer, freeze, batch, seq, 3)))
        return
    if a.train:  # the command gpumem fit runs: GPT-2 small, AMP AdamW
        train("gpt2", "amp-bf16", "adamw", None, a.batch, 1024, a.steps)
        return
    rows, tmp = [], tempfile.mkdtemp()
    for name, family, precision, optimizer, freeze, batch, seq in (CONFIGS[:4] if a.quick else CONFIGS):
        m = child_measure(name, family, precision, optimizer, freeze, batch, seq)
        act = None
        if family == "resnet50":  # per-sample bytes from two batches, as gpumem fit would measure them
            m1 = child_measure(name, family, precision, optimizer, freeze, batch // 2, seq)
            act = (m["reservedBytes"] - m1["reservedBytes"]) // (batch - batch // 2) if "error" not in m1 and "error" not in m else None
        est, detail = estimate(a.gpumem, family, precision, optimizer, freeze, batch, seq, act, tmp)
        truth = m.get("nvmlBytes") or None
        P = detail["model"]["totalParams"] if isinstance(detail, dict) else None
        row = {"config": name, "measured": m, "estimateBytes": est, "params": P,
               "accelerateBytes": P * (16 if precision == "fp32" else 8) if P else None,
               "deepspeedModelStatesBytes": P * 20 if P else None}
        if truth and est:
            row["errorPct"] = (est - truth) / truth * 100
        rows.append(row)
        print(f"{name:32} measured {truth and truth/2**30:8.2f} GiB  gpumem {est and est/2**30:8.2f} GiB  err {row.get('errorPct', float('nan')):+6.1f} %  accelerate {row['accelerateBytes'] and row['accelerateBytes']/2**30:7.2f}  deepspeed {row['deepspeedModelStatesBytes'] and row['deepspeedModelStatesBytes']/2**30:7.2f}", flush=True)
    errs = [abs(r["errorPct"]) for r in rows if "errorPct" in r]
    summary = {"medianAbsErrorPct": statistics.median(errs) if errs else None, "maxAbsErrorPct": max(errs) if errs else None,
               "underEstimates": sum(1 for r in rows if r.get("errorPct", 0) < -8)}
    print(json.dumps(summary))
    fit = None
    if not a.quick:
        t0 = time.time()
        r = subprocess.run(shlex.split(a.gpumem) + ["fit", "--json", "--", sys.executable, __file__, "--train", "x", "--batch", "{batch}", "--steps", "{steps}"], capture_output=True, text=True)
        fit = json.loads(r.stdout) if r.stdout.strip() else {"error": r.stderr[-400:]}
        fit["wallSeconds"] = time.time() - t0
        if fit.get("batch"):
            ok = subprocess.run([sys.executable, __file__, "--train", "x", "--batch", str(fit["batch"]), "--steps", "200"]).returncode == 0
            fit["continued200StepsOk"] = ok
        lo, hi = 1, 4096  # true maximum at 100 % by bisection, each trial a fresh process
        while hi - lo > 1:
            mid = (lo + hi) // 2
            good = subprocess.run([sys.executable, __file__, "--train", "x", "--batch", str(mid), "--steps", "3"], capture_output=True).returncode == 0
            lo, hi = (mid, hi) if good else (lo, mid)
        fit["trueMaxBatch"] = lo
        print(f"fit: {len(fit.get('runs', []))} runs, batch {fit.get('batch')} vs true max {lo}, 200 steps ok: {fit.get('continued200StepsOk')}")
    import torch
    meta = {"date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "driver": subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()}
    if a.out:
        json.dump({"meta": meta, "rows": rows, "summary": summary, "fit": fit}, open(a.out, "w"), indent=2)


if __name__ == "__main__":
    main()
