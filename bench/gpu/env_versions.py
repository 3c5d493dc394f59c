"""The Python side of the machine the GPU checks ran on (bench/gpu/run-all.sh, step env), as JSON on stdout."""
import json
import platform
import sys

info = {"python": sys.version.split()[0], "platform": platform.platform()}
try:
    import torch
    info.update(torch=torch.__version__, torchCuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
                gpu=torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
                cudaAvailable=torch.cuda.is_available())
except Exception as e:
    info["torchError"] = repr(e)
for name in ("torchvision", "timm", "transformers", "safetensors", "numpy"):
    try:
        info[name] = __import__(name).__version__
    except Exception:
        info[name] = None
print(json.dumps(info, indent=2))
