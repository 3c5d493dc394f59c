"""The trace file: one JSON object per line, written as the step runs and flushed at the end.

The format is documented in docs/estimate.md ("Trace file"); gpumem's reader checks ``schemaVersion``.
"""
import json

TRACE_SCHEMA_VERSION = 1


class TraceWriter:
    """Buffers events in memory (a 7B step is a few hundred thousand small dicts) and writes them once."""

    def __init__(self, path):
        self.path = path
        self.events = []
        self.notes = []

    def event(self, **fields):
        self.events.append(fields)

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)

    def finish(self, header, error=None):
        """Writes header, events, notes and the end line; ``error`` marks a run that produced no usable step."""
        with open(self.path, "w", encoding="utf-8") as out:
            out.write(json.dumps(dict(header, kind="header", schemaVersion=TRACE_SCHEMA_VERSION)) + "\n")
            for ev in self.events:
                out.write(json.dumps(ev, separators=(",", ":")) + "\n")
            for text in self.notes:
                out.write(json.dumps({"kind": "note", "text": text}) + "\n")
            end = {"kind": "end"}
            if error is not None:
                end["error"] = error
            out.write(json.dumps(end) + "\n")
