"""`python -m rlsuite.envs` lists every registered env name."""

import os
import sys

from rlsuite.envs.registry import names
from rlsuite.flags import Parser

# No options: the parser gives --help and refuses what it does not know, in one line.
Parser(
    prog="python -m rlsuite.envs",
    description="List the env names an experiment's config can use (.environment(NAME)).",
).parse_args()
try:
    print("\n".join(names()), flush=True)
except BrokenPipeError:  # `| head`: the reader has what it wanted (Python's documented idiom)
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
