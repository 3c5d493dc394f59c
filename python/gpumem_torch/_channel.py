"""The local channel to the gpumem supervisor: newline-delimited JSON over a Unix socket or an inherited fd.

Writes never block the training program: the socket is non-blocking, a line that cannot be written now
waits in a small buffer, and when the buffer is full new messages are dropped (and counted) rather than
delaying a training step. Lines are never cut: a partial write keeps its remainder for the next flush.
"""
import json
import os
import socket
import threading

MAX_PENDING_BYTES = 1 << 20


class Channel:
    """One connection to the supervisor; thread-safe ``send``; ``close`` flushes what it can."""

    def __init__(self, address):
        self._lock = threading.Lock()
        self._pending = bytearray()
        self.dropped = 0
        self.closed = False
        self._sock = None
        self._fd = None
        if address.startswith("unix:"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(2.0)
            sock.connect(address[len("unix:"):])
            sock.setblocking(False)
            self._sock = sock
        elif address.startswith("fd:"):
            fd = int(address[len("fd:"):])
            os.set_blocking(fd, False)
            self._fd = fd
        else:
            raise ValueError("unknown channel address %r (expected unix:PATH or fd:N)" % address)

    def _write(self, data):
        if self._sock is not None:
            return self._sock.send(data)
        return os.write(self._fd, data)

    def _flush_locked(self):
        while self._pending:
            try:
                written = self._write(self._pending)
            except (BlockingIOError, InterruptedError):
                return
            # Deleting from the front of a bytearray is O(1) in CPython, so a backlog costs no copying.
            del self._pending[:written]

    def send(self, message):
        """Queues one message (a dict) as a JSON line and writes what the socket accepts right now."""
        line = (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")
        with self._lock:
            if self.closed:
                return False
            if len(self._pending) + len(line) > MAX_PENDING_BYTES:
                self.dropped += 1
                return False
            self._pending.extend(line)
            self._flush_locked()
            return True

    def close(self, flush_timeout_s=1.0):
        """Writes what is still pending (waiting at most ``flush_timeout_s``) and closes the connection."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            if self._pending and self._sock is not None:
                try:
                    self._sock.settimeout(flush_timeout_s)
                    self._sock.sendall(self._pending)
                except OSError:
                    pass
            elif self._pending and self._fd is not None:
                try:
                    os.set_blocking(self._fd, True)
                    os.write(self._fd, self._pending)
                except OSError:
                    pass
            self._pending = bytearray()
            self._close_descriptor()

    def abandon(self):
        """Forgets the connection without writing (used in a forked child that must not talk on the parent's socket)."""
        with self._lock:
            self.closed = True
            self._pending = bytearray()
            # Closing our copy of the descriptor leaves the parent's connection untouched.
            self._close_descriptor()

    def _close_descriptor(self):
        """Closes the socket or inherited fd, whichever this channel writes to; errors are ignored (already closed)."""
        try:
            if self._sock is not None:
                self._sock.close()
            elif self._fd is not None:
                os.close(self._fd)
        except OSError:
            pass
