"""Shared test plumbing: run a Python program against one fake torch, optionally with a gpumem channel."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PYTHON_DIR = os.path.join(REPO, "python")
SITE_DIR = os.path.join(PYTHON_DIR, "_site")
FAKES = os.path.join(HERE, "fake_torch_versions")
SCRIPTS = os.path.join(HERE, "scripts")
VERSIONS = ("v1_13", "v2_0", "v2_1", "v2_4", "v2_11")


class Listener:
    """A Unix socket like the one the supervisor opens; collects every line from every connection."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="gpumem-pytest-")
        self.path = os.path.join(self.dir, "companion.sock")
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.path)
        self.server.listen(8)
        self.buffers = []
        self.readers = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            reader = threading.Thread(target=self._read, args=(conn,), daemon=True)
            reader.start()
            self.readers.append(reader)

    def _read(self, conn):
        buffer = bytearray()
        self.buffers.append(buffer)
        with conn:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                buffer.extend(data)

    def clear(self):
        self.buffers = []

    def _parse(self):
        found = []
        for buffer in list(self.buffers):
            text = bytes(buffer).decode("utf-8")
            found.extend(json.loads(line) for line in text.splitlines() if line.strip())
        return found

    def messages(self, timeout_s=5.0):
        """Every message received, once each hello has its bye (the programs have exited by then)."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = self._parse()
            hellos = sum(1 for m in found if m.get("type") == "hello")
            byes = sum(1 for m in found if m.get("type") == "bye")
            if (hellos and byes >= hellos) or time.monotonic() > deadline:
                return found
            time.sleep(0.01)

    def close(self):
        self.server.close()
        try:
            os.unlink(self.path)
            os.rmdir(self.dir)
        except OSError:
            pass


def run_python(version, args, channel=None, env=None, site=True, extra_path=(), timeout=30):
    """Runs ``python3 args…`` with the fake torch ``version`` importable and gpumem's sitecustomize first."""
    paths = ([SITE_DIR] if site else []) + list(extra_path) + [os.path.join(FAKES, version), PYTHON_DIR]
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUMEM_", "FAKE_TORCH_"))}
    full_env["PYTHONPATH"] = os.pathsep.join(paths)
    full_env["PYTHONDONTWRITEBYTECODE"] = "1"
    if channel is not None:
        full_env["GPUMEM_COMPANION_CHANNEL"] = channel
    full_env.update(env or {})
    return subprocess.run([sys.executable] + list(args), env=full_env, capture_output=True, text=True,
                          timeout=timeout)


def last_json_line(stdout):
    """The ground truth a test script prints as its last line."""
    return json.loads(stdout.strip().splitlines()[-1])


def of_type(messages, kind):
    return [m for m in messages if m.get("type") == kind]
