"""Runs the companion's unittest suite (test_*.py here) and prints the outcome of each test as JSON, so the
vitest runner can report them one by one. `--list` prints only the test ids, without running anything."""
import io
import json
import os
import sys
import traceback
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def flatten(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from flatten(item)
        else:
            yield item


class Recorder(unittest.TestResult):
    """Keeps one outcome per test id; a failing subtest fails its test."""

    def __init__(self):
        super().__init__(stream=io.StringIO())
        self.outcomes = {}

    def _set(self, test, outcome, details=""):
        previous = self.outcomes.get(test.id())
        if previous and previous["outcome"] != "passed":
            details = previous["details"] + "\n" + details
            outcome = previous["outcome"]
        self.outcomes[test.id()] = {"outcome": outcome, "details": details}

    def addSuccess(self, test):
        if test.id() not in self.outcomes:
            self._set(test, "passed")

    def addFailure(self, test, err):
        self._set(test, "failed", "".join(traceback.format_exception(*err)))

    def addError(self, test, err):
        self._set(test, "error", "".join(traceback.format_exception(*err)))

    def addSkip(self, test, reason):
        self._set(test, "skipped", reason)

    def addSubTest(self, test, subtest, err):
        if err is not None:
            self._set(test, "failed", f"{subtest.id()}:\n" + "".join(traceback.format_exception(*err)))

    def addExpectedFailure(self, test, err):
        self._set(test, "failed", "expected failure counted as failure")

    def addUnexpectedSuccess(self, test):
        self._set(test, "failed", "unexpected success")


def main():
    suite = unittest.defaultTestLoader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    tests = list(flatten(suite))
    if "--list" in sys.argv:
        print(json.dumps([t.id() for t in tests]))
        return
    recorder = Recorder()
    suite.run(recorder)
    print(json.dumps(recorder.outcomes))


if __name__ == "__main__":
    main()
