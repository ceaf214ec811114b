"""`python -m rlsuite.envs` lists every registered env name."""

from rlsuite.envs.registry import names

for name in names():
    print(name)
