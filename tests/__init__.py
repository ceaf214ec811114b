"""The tests start hundreds of Python processes (CLI runs, Ray's workers). Where
PYTHONDONTWRITEBYTECODE is set (CI's machine) and nothing compiled the venv, each would parse
torch's and RLlib's sources again: importing rlsuite.run took 16-18 s instead of 8 s on
2 vCPUs. Written by the first process that imports a module, its bytecode serves every later
one, so the tests' set-up line skips uv's `--compile-bytecode`, which compiles every
installed package up front (71 of CI's 79 s of install), most of which no test imports.

Here, in the package every test module and conftest imports first: before pytest-xdist
starts its workers, and before tests.helpers copies the environment for the Ray clusters
it starts.
"""

import os
import sys

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
