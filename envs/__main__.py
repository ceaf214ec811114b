"""`python -m envs` lists every registered env name."""

from envs.registry import names

for name in names():
    print(name)
