#!/usr/bin/env python3
"""The training side of the estimate-accuracy benchmark (bench/gpu/estimate-accuracy.py, docs/gpu-checks.md).

Importing this module needs no torch: it holds the configs and their Hugging Face config dicts (built locally,
never downloaded), which the benchmark also hands to `gpumem estimate`. Run as a script it trains one config in
this fresh process and measures its peak:

    python3 accuracy_model.py --measure NAME [--batch B] [--steps 3]     one JSON line "ACCURACY-RESULT {...}"
    python3 accuracy_model.py --train NAME --batch B --steps S           the command `gpumem fit` runs

Process memory as NVML sees it is read with nvidia-smi in three ways, because in a container with its own
PID namespace the pids nvidia-smi lists are the host's, not ours: our pid in --query-compute-apps (`pid`);
else the one process on our GPU (matched by UUID) that was not there before our CUDA init (`new-process`);
and always the GPU's used memory now minus before our CUDA init (`device-delta`, right only while nothing
else on that GPU allocates; the benchmark runs one config at a time). The reading is taken at the end of
training, while the caching allocator still holds its segments; the peak adds what was released since
(max_memory_reserved - memory_reserved).
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
import traceback

MiB = 1024 * 1024
RESULT_MARK = "ACCURACY-RESULT "
# The GPU machine has no network: never let a library wait on the Hub (children and `gpumem fit`'s runs inherit it).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

HF = {
    "vit": {"model_type": "vit", "architectures": ["ViTForImageClassification"], "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
            "intermediate_size": 3072, "image_size": 224, "patch_size": 16, "num_channels": 3, "num_labels": 1000,
            "hidden_dropout_prob": 0.0},
    "bert": {"model_type": "bert", "architectures": ["BertForMaskedLM"], "hidden_size": 768, "num_hidden_layers": 12,
             "num_attention_heads": 12, "intermediate_size": 3072, "vocab_size": 30522,
             "max_position_embeddings": 512, "type_vocab_size": 2},
    "gpt2": {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024},
    "gpt2-medium": {"model_type": "gpt2", "n_embd": 1024, "n_layer": 24, "n_head": 16, "vocab_size": 50257,
                    "n_positions": 1024},
    "llama-1b": {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
                 "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256,
                 "max_position_embeddings": 2048, "tie_word_embeddings": True},
}
# The class each family trains as (the head decides the logits and the loss); `architectures` above tells
# `gpumem estimate` the same head.
AUTO_CLASS = {"vit": "AutoModelForImageClassification", "bert": "AutoModelForMaskedLM", "gpt2": "AutoModelForCausalLM",
              "gpt2-medium": "AutoModelForCausalLM", "llama-1b": "AutoModelForCausalLM"}

RESNET_BACKBONE = ["conv1", "bn1", "layer1", "layer2", "layer3", "layer4"]
VIT_LOWER_HALF = ["vit.embeddings"] + [f"vit.encoder.layer.{i}" for i in range(6)]
GPT2M_LOWER_HALF = ["transformer.wte", "transformer.wpe"] + [f"transformer.h.{i}" for i in range(12)]


def _cfg(name, family, precision, optimizer, freeze, batch, seq):
    return {"name": name, "family": family, "precision": precision, "optimizer": optimizer, "freeze": freeze,
            "batch": batch, "seq": seq}


# seq is the token count for transformers (ViT: 196 patches + CLS) and the image side for ResNet.
CONFIGS = [
    _cfg("resnet50-fp32-adamw-full", "resnet50", "fp32", "adamw", [], 64, 224),
    _cfg("resnet50-amp-sgd-full", "resnet50", "amp-bf16", "sgd-momentum", [], 128, 224),
    _cfg("resnet50-fp32-adamw-frozen", "resnet50", "fp32", "adamw", RESNET_BACKBONE, 64, 224),
    _cfg("vit-b16-fp32-adamw-full", "vit", "fp32", "adamw", [], 32, 197),
    _cfg("vit-b16-amp-adamw-full", "vit", "amp-bf16", "adamw", [], 64, 197),
    _cfg("vit-b16-amp-adamw-frozen", "vit", "amp-bf16", "adamw", VIT_LOWER_HALF, 64, 197),
    _cfg("bert-base-fp32-adamw-full", "bert", "fp32", "adamw", [], 16, 512),
    _cfg("bert-base-amp-sgd-full", "bert", "amp-bf16", "sgd-momentum", [], 32, 512),
    _cfg("gpt2-fp32-adamw-full", "gpt2", "fp32", "adamw", [], 8, 1024),
    _cfg("gpt2-amp-adamw-full", "gpt2", "amp-bf16", "adamw", [], 16, 1024),
    _cfg("gpt2-medium-amp-adamw-full", "gpt2-medium", "amp-bf16", "adamw", [], 8, 1024),
    _cfg("gpt2-medium-amp-sgd-frozen", "gpt2-medium", "amp-bf16", "sgd-momentum", GPT2M_LOWER_HALF, 8, 1024),
    _cfg("llama-1b-amp-adamw-full", "llama-1b", "amp-bf16", "adamw", [], 4, 2048),
    _cfg("llama-1b-bf16-adamw-full", "llama-1b", "bf16", "adamw", [], 4, 2048),
]
BY_NAME = {c["name"]: c for c in CONFIGS}
FIT_CONFIG = "gpt2-amp-adamw-full"   # the model `gpumem fit` is run on


def resnet50_tensors():
    """torchvision resnet50's state_dict as (name, shape, dtype), written out so no torch is needed for it."""
    out = []

    def conv(name, cout, cin, k):
        out.append((f"{name}.weight", [cout, cin, k, k], "F32"))

    def bn(name, c):
        out.extend([(f"{name}.weight", [c], "F32"), (f"{name}.bias", [c], "F32"), (f"{name}.running_mean", [c], "F32"),
                    (f"{name}.running_var", [c], "F32"), (f"{name}.num_batches_tracked", [], "I64")])

    conv("conv1", 64, 3, 7)
    bn("bn1", 64)
    inplanes = 64
    for layer, (blocks, planes) in enumerate(zip([3, 4, 6, 3], [64, 128, 256, 512]), start=1):
        for b in range(blocks):
            p = f"layer{layer}.{b}"
            conv(f"{p}.conv1", planes, inplanes, 1); bn(f"{p}.bn1", planes)
            conv(f"{p}.conv2", planes, planes, 3); bn(f"{p}.bn2", planes)
            conv(f"{p}.conv3", planes * 4, planes, 1); bn(f"{p}.bn3", planes * 4)
            if b == 0:
                conv(f"{p}.downsample.0", planes * 4, inplanes, 1); bn(f"{p}.downsample.1", planes * 4)
            inplanes = planes * 4
    out.extend([("fc.weight", [1000, 2048], "F32"), ("fc.bias", [1000], "F32")])
    return out


def write_resnet50_header(path):
    """A safetensors file with resnet50's real header and no tensor data: `gpumem estimate` reads only the
    header, and module names let --freeze work. Returns the trainable-parameter count (buffers excluded)."""
    header, offset, params = {}, 0, 0
    for name, shape, dtype in resnet50_tensors():
        n = 1
        for d in shape:
            n *= d
        size = n * (8 if dtype == "I64" else 4)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
        if not name.endswith((".running_mean", ".running_var", ".num_batches_tracked")):
            params += n
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(len(raw).to_bytes(8, "little") + raw)
    return params


# ------------------------------------------------------------------------------------------- nvidia-smi
def smi_csv(query):
    """Rows of `nvidia-smi --query-…=… --format=csv,noheader,nounits`; [] when nvidia-smi is missing or fails."""
    try:
        r = subprocess.run(["nvidia-smi", query, "--format=csv,noheader,nounits"], capture_output=True, text=True,
                           timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if r.returncode != 0:
        return []
    return [[x.strip() for x in line.split(",")] for line in r.stdout.splitlines() if line.strip()]


def mib_or_none(text):
    try:
        return int(text) * MiB
    except ValueError:   # "[N/A]" where the driver does not report per-process memory
        return None


def norm_uuid(uuid):
    u = str(uuid or "").strip().lower()
    return u[4:] if u.startswith("gpu-") else u


def gpu_used():
    """{uuid: used bytes} for every GPU."""
    return {norm_uuid(r[0]): mib_or_none(r[1]) for r in smi_csv("--query-gpu=uuid,memory.used") if len(r) >= 2}


def gpu_apps():
    """[(pid, uuid, used bytes or None)] of every compute process."""
    rows = smi_csv("--query-compute-apps=pid,gpu_uuid,used_memory")
    return [(int(r[0]), norm_uuid(r[1]), mib_or_none(r[2])) for r in rows if len(r) >= 3 and r[0].isdigit()]


def process_memory(uuid, pids_before, used_before):
    """This process's GPU memory by each method that works here, and which one is taken (see the docstring)."""
    apps = [a for a in gpu_apps() if uuid is None or a[1] == uuid]
    mine = [a[2] for a in apps if a[0] == os.getpid()]
    new = [a[2] for a in apps if a[0] not in pids_before]
    used_now = gpu_used()
    delta = None
    if uuid in used_now and used_before.get(uuid) is not None and used_now[uuid] is not None:
        delta = used_now[uuid] - used_before[uuid]
    got = {"pid": mine[0] if mine else None, "new-process": new[0] if len(new) == 1 else None, "device-delta": delta}
    method = next((m for m in ("pid", "new-process", "device-delta") if got[m] is not None), None)
    return {"bytes": got[method] if method else None, "method": method, "byMethod": got,
            "processesThereBefore": len([a for a in apps if a[0] in pids_before])}


def gpu_identity():
    """The first GPU's name, driver and memory as nvidia-smi reports them (None each without nvidia-smi)."""
    rows = smi_csv("--query-gpu=name,driver_version,memory.total")
    r = rows[0] if rows and len(rows[0]) >= 3 else [None, None, None]
    return {"gpu": r[0], "driver": r[1], "memoryTotalBytes": mib_or_none(r[2]) if r[2] else None, "gpuCount": len(rows)}


def catalogue_gpu():
    """The `gpumem estimate --gpu` catalogue name of the same generation, for when `--gpu auto` cannot read the
    GPU: the budget then differs, but context and workspace (the parts of the peak the GPU decides) do not."""
    name = gpu_identity()["gpu"] or ""
    return "H100-80GB" if re.search(r"\b(H100|H200|H800|GH200)\b", name) else None


def torch_gpu_uuid(torch):
    """Our device's UUID as nvidia-smi writes it; falls back to the only GPU, or None."""
    try:
        return norm_uuid(torch.cuda.get_device_properties(0).uuid)
    except Exception:
        pass
    uuids = list(gpu_used())
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    if visible.lower().startswith("gpu-"):
        return norm_uuid(visible)
    if visible.isdigit() and int(visible) < len(uuids):
        return uuids[int(visible)]
    return uuids[0] if len(uuids) == 1 else None


# ------------------------------------------------------------------------------------------- torch side
def build(cfg):
    """The config's model with random weights, built locally on the CPU (nothing is downloaded), frozen as
    the config says. Returns (model, input kind)."""
    family = cfg["family"]
    if family == "resnet50":
        try:
            import torchvision
        except ImportError as e:
            raise RuntimeError(f"torchvision is not importable ({e}); the ResNet-50 configs need it") from e
        model, kind = torchvision.models.resnet50(), "image"   # no weights argument: random init, no download
    else:
        try:
            import transformers
        except ImportError as e:
            raise RuntimeError(f"transformers is not importable ({e}); the {family} configs need it") from e
        spec = {k: v for k, v in HF[family].items() if k not in ("model_type", "architectures")}
        try:
            config = transformers.AutoConfig.for_model(HF[family]["model_type"], **spec)
        except AttributeError:   # should a version drop for_model: the registry it reads
            config = transformers.CONFIG_MAPPING[HF[family]["model_type"]](**spec)
        auto = getattr(transformers, AUTO_CLASS[family])
        try:   # SDPA is what `gpumem estimate` assumes by default (--attention sdpa)
            model = auto.from_config(config, attn_implementation="sdpa")
        except (TypeError, ValueError, ImportError):
            model = auto.from_config(config)
        kind = "image" if family == "vit" else "tokens"
    names = [n for n, _ in model.named_parameters()]
    applied = [_prefix_in(names, x) for x in cfg["freeze"]]
    for n, p in model.named_parameters():
        if any(n == x or n.startswith(x + ".") for x in applied):
            p.requires_grad_(False)
    return model.train(), kind


# Module renames between transformers releases: the configs name modules as `gpumem estimate`'s config mode
# builds them (transformers 4.x names); transformers 5 calls ViT's blocks `vit.layers.N`.
RENAMES = [("vit.encoder.layer.", "vit.layers.")]


def _prefix_in(names, prefix):
    """`prefix` as this model spells it. A prefix that names no parameter would freeze nothing and the run
    would measure a fully trained model under a frozen config's name, so it ends the run instead."""
    def hits(x):
        return any(n == x or n.startswith(x + ".") for n in names)
    if hits(prefix):
        return prefix
    for old, new in RENAMES:
        if prefix.startswith(old) and hits(new + prefix[len(old):]):
            return new + prefix[len(old):]
    raise RuntimeError(f"freeze prefix {prefix!r} names no parameter of this model (first names: {names[:4]})")


def train(cfg, batch, steps):
    """Trains `steps` steps at `batch` in this process; returns facts about the model and the run."""
    import torch
    random.seed(0)
    torch.manual_seed(0)   # seeds every GPU too
    model, kind = build(cfg)
    model = model.to(torch.bfloat16) if cfg["precision"] == "bf16" else model.float()   # dtype on the CPU
    facts = {"totalParams": sum(p.numel() for p in model.parameters()),
             "trainableParams": sum(p.numel() for p in model.parameters() if p.requires_grad),
             "attention": getattr(getattr(model, "config", None), "_attn_implementation", None)}
    model = model.cuda()
    params = [p for p in model.parameters() if p.requires_grad]
    # foreach explicitly: the estimate's default (--optimizer-impl foreach), whatever this torch defaults to.
    if cfg["optimizer"] == "adamw":
        opt = torch.optim.AdamW(params, lr=1e-4, foreach=True)
    else:
        opt = torch.optim.SGD(params, lr=1e-3, momentum=0.9, foreach=True)
    dtype = torch.bfloat16 if cfg["precision"] == "bf16" else torch.float32
    amp = cfg["precision"].startswith("amp")
    vocab = HF.get(cfg["family"], {}).get("vocab_size")
    times = []
    for _ in range(steps):
        t0 = time.time()
        if kind == "image":
            side = cfg["seq"] if cfg["family"] == "resnet50" else HF["vit"]["image_size"]
            x = torch.randn(batch, 3, side, side, device="cuda", dtype=dtype)
            y = torch.randint(0, 1000, (batch,), device="cuda")
        else:
            x = torch.randint(0, vocab, (batch, cfg["seq"]), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            if cfg["family"] == "resnet50":
                loss = torch.nn.functional.cross_entropy(model(x), y)
            elif kind == "image":
                loss = model(pixel_values=x, labels=y).loss
            else:
                loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        times.append(round(time.time() - t0, 3))
    facts["stepSeconds"] = times
    return facts


def measure(cfg, batch, steps, history=None):
    """One measured run: peaks from torch and from NVML (see the module docstring). ``history``: a path to dump
    the allocator's memory history of the steps to (torch.cuda.memory._dump_snapshot), so the estimate's
    allocation sequence can be compared event by event with CUDA's; recording keeps host memory only."""
    out = {"config": cfg["name"], "batch": batch, "steps": steps, "pid": os.getpid()}
    apps_before = gpu_apps()
    pids_before = {a[0] for a in apps_before}
    used_before = gpu_used()
    import torch
    out.update(torch=torch.__version__, deviceUsedBeforeBytes=None)
    if not torch.cuda.is_available():
        raise RuntimeError("torch.cuda.is_available() is False")
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    uuid = torch_gpu_uuid(torch)
    out.update(gpuUuid=uuid, gpu=torch.cuda.get_device_name(0), deviceUsedBeforeBytes=used_before.get(uuid))
    early = process_memory(uuid, pids_before, used_before)
    reserved_early = torch.cuda.memory_reserved()
    # What the context costs before any kernel library loads: NVML process memory minus torch's segments.
    out["contextAfterInitBytes"] = early["bytes"] - reserved_early if early["bytes"] is not None else None
    out["contextAfterInitMethod"] = early["method"]
    torch.cuda.reset_peak_memory_stats()
    if history:
        torch.cuda.memory._record_memory_history(max_entries=400_000, stacks="python")
    oom_type = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", RuntimeError)
    try:
        out.update(train(cfg, batch, steps))
        out["status"] = "ok"
    except oom_type as e:
        out.update(status="oom", reason=f"CUDA out of memory: {str(e)[:400]}")
    torch.cuda.synchronize()
    if history:
        torch.cuda.memory._dump_snapshot(history)
        torch.cuda.memory._record_memory_history(enabled=None)
        out["memoryHistory"] = os.path.basename(history)
    out["maxReservedBytes"] = torch.cuda.max_memory_reserved()
    out["maxAllocatedBytes"] = torch.cuda.max_memory_allocated()
    out["reservedAtEndBytes"] = torch.cuda.memory_reserved()
    end = process_memory(uuid, pids_before, used_before)
    out["nvmlAtEnd"] = end
    released = out["maxReservedBytes"] - out["reservedAtEndBytes"]
    out["nvmlPeakBytes"] = end["bytes"] + released if end["bytes"] is not None else None
    out["nvmlMethod"] = end["method"]
    out["contextAtEndBytes"] = end["bytes"] - out["reservedAtEndBytes"] if end["bytes"] is not None else None
    ctx = out["contextAfterInitBytes"]
    out["reservedPlusContextBytes"] = out["maxReservedBytes"] + ctx if ctx is not None else None
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--measure", metavar="NAME")
    ap.add_argument("--train", metavar="NAME")
    ap.add_argument("--batch", type=int)
    ap.add_argument("--steps", type=int, default=int(os.environ.get("GPUMEM_STEPS", "3")))
    ap.add_argument("--memory-history", metavar="FILE.pickle", help="with --measure: dump the allocator's memory "
                    "history of the steps there (an allocator snapshot with its trace)")
    ap.add_argument("--freeze", metavar="A,B", help="module prefixes to freeze instead of the config's (\"\" for none): "
                    "to repeat a measured run that froze something else")
    a = ap.parse_args()
    name = a.measure or a.train
    if name not in BY_NAME:
        ap.error(f"unknown config {name!r}; known: {', '.join(BY_NAME)}")
    cfg = BY_NAME[name]
    if a.freeze is not None:
        cfg = dict(cfg, freeze=[x for x in a.freeze.split(",") if x])
    batch = a.batch or int(os.environ.get("GPUMEM_BATCH", cfg["batch"]))
    if a.train:   # errors (an OOM too) end the process with a traceback and a non-zero exit, as fit expects
        facts = train(cfg, batch, a.steps)
        import torch
        print(f"{name} batch {batch}: {a.steps} steps ok, peak reserved {torch.cuda.max_memory_reserved() / 2**30:.2f} GiB, "
              f"last step {facts['stepSeconds'][-1] if facts['stepSeconds'] else None} s", flush=True)
        return
    try:
        out = measure(cfg, batch, a.steps, a.memory_history)
    except Exception as e:
        out = {"config": name, "batch": batch, "status": "error", "reason": f"{type(e).__name__}: {e}",
               "traceback": traceback.format_exc()[-1500:]}
    print(RESULT_MARK + json.dumps(out), flush=True)
    sys.exit(0 if out.get("status") == "ok" else 1)


if __name__ == "__main__":
    main()
