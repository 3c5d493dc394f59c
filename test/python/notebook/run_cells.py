"""Runs notebook cells in a real IPython kernel (ipykernel, started and driven by jupyter_client) and prints what
each cell showed, as JSON: [{"out": stdout text, "result": the displayed value or null, "error": the exception
name or null}]. Cells come as a JSON list on stdin. The kernel imports the companion from python/ and the fake
torch of test/python/fake_torch_versions/v2_11 (a simulated CUDA allocator, 8 GiB), never real torch."""
import json
import os
import sys
import tempfile

from jupyter_client.manager import start_new_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def main():
    cells = json.load(sys.stdin)
    runtime = tempfile.mkdtemp(prefix="gpumem-kernel-")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(REPO, "python"), os.path.join(REPO, "test", "python", "fake_torch_versions", "v2_11")]),
               FAKE_TORCH_TOTAL_BYTES=str(8 << 30), JUPYTER_RUNTIME_DIR=runtime, PYTHONDONTWRITEBYTECODE="1")
    os.environ["JUPYTER_RUNTIME_DIR"] = runtime
    km, kc = start_new_kernel(kernel_name="python3", env=env)
    shown = []
    try:
        for code in cells:
            msg_id = kc.execute(code)
            cell = {"out": "", "result": None, "error": None}
            while True:
                msg = kc.get_iopub_msg(timeout=30)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                kind, content = msg["msg_type"], msg["content"]
                if kind == "stream":
                    cell["out"] += content["text"]
                elif kind == "execute_result":
                    cell["result"] = content["data"].get("text/plain")
                elif kind == "error":
                    cell["error"] = content["ename"]
                elif kind == "status" and content["execution_state"] == "idle":
                    break
            shown.append(cell)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    print(json.dumps(shown))


if __name__ == "__main__":
    main()
