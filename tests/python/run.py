"""Runs the Python tests (unittest) and ends with "N passed, N failed"."""
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))
suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py")
result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
# a skipped test did not show anything: it counts as failed
failed = len(result.failures) + len(result.errors) + len(result.skipped)
print(f"{result.testsRun - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
