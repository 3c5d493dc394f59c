"""gpumem's sitecustomize chains to the user's: it runs, and fails, exactly as it would without gpumem."""
import os
import unittest

from helpers import HERE, PYTHON_DIR, Listener, of_type, run_python

PROBE = ("import os, sys, torch\n"
         "print(os.environ.get('USER_SITECUSTOMIZE_RAN'), sys.modules['sitecustomize'].__file__)\n")


class SiteCustomizeTest(unittest.TestCase):
    def test_user_sitecustomize_runs_with_the_companion_active(self):
        listener = Listener()
        try:
            proc = run_python("v2_4", ["-c", PROBE], channel="unix:" + listener.path,
                              extra_path=[os.path.join(HERE, "user_site_ok")])
            ran, module_file = proc.stdout.split()
            self.assertEqual(ran, "yes", proc.stderr)
            self.assertTrue(module_file.endswith(os.path.join("user_site_ok", "sitecustomize.py")))
            self.assertEqual(len(of_type(listener.messages(), "hello")), 1)
        finally:
            listener.close()

    def test_user_sitecustomize_runs_without_the_companion(self):
        proc = run_python("v2_4", ["-c", PROBE], extra_path=[os.path.join(HERE, "user_site_ok")])
        self.assertEqual(proc.stdout.split()[0], "yes", proc.stderr)

    def test_a_failing_user_sitecustomize_fails_the_same_way(self):
        extra = [os.path.join(HERE, "user_site_fails")]
        code = "import torch\nprint('program ran')\n"
        ours = run_python("v2_4", ["-c", code], extra_path=extra)
        theirs = run_python("v2_4", ["-c", code], extra_path=extra, site=False)
        self.assertEqual(ours.stdout, "program ran\n")
        self.assertEqual(ours.stdout, theirs.stdout)
        self.assertIn("user sitecustomize is broken", theirs.stderr)
        self.assertEqual(ours.stderr, theirs.stderr)

    def test_the_companion_is_the_one_beside_gpumem_not_another_on_the_path(self):
        listener = Listener()
        try:
            probe = "import torch, gpumem_torch\nprint(gpumem_torch.__file__)\n"
            proc = run_python("v2_4", ["-c", probe], channel="unix:" + listener.path,
                              extra_path=[os.path.join(HERE, "impostor_site")])
            self.assertNotIn("impostor", proc.stderr)
            self.assertEqual(os.path.realpath(proc.stdout.strip()),
                             os.path.realpath(os.path.join(PYTHON_DIR, "gpumem_torch", "__init__.py")))
            self.assertEqual(len(of_type(listener.messages(), "hello")), 1)
            # Where gpumem asked for no companion the program's own import finds the other one, as before.
            plain = run_python("v2_4", ["-c", probe], extra_path=[os.path.join(HERE, "impostor_site")])
            self.assertIn("impostor", plain.stderr)
        finally:
            listener.close()

    def test_no_user_sitecustomize_is_fine(self):
        proc = run_python("v2_4", ["-c", "import torch; print('ok')"])
        self.assertEqual((proc.stdout, proc.stderr), ("ok\n", ""))


if __name__ == "__main__":
    unittest.main()
