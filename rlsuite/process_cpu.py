"""Wall and CPU seconds of a command and every process it starts, for the benchmarks."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path


def run_measured(command: list[str], cwd: Path) -> tuple[float, float | None]:
    """Wall seconds and CPU seconds of `command` and every process it starts (Ray's too)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(
            command, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, text=True
        )
        cpu = CpuMeter(process.pid)
        while process.poll() is None:
            cpu.sample()
            time.sleep(CPU_SAMPLE_S)
        wall_s = time.perf_counter() - start
        if process.returncode != 0:
            log.seek(0)
            tail = log.read().strip().splitlines()[-15:]
            raise RuntimeError(f"{' '.join(command)} failed:\n" + "\n".join(tail))
    return wall_s, cpu.seconds()


# Ray's workers are not reaped by the process that started Ray, so getrusage misses them;
# /proc is read instead, twice a second (a process that lives less than that is missed).
CPU_SAMPLE_S = 0.5


class CpuMeter:
    """CPU seconds (user + system) of a process tree, from Linux's /proc."""

    def __init__(self, root_pid: int) -> None:
        self.root_pid = root_pid
        self.ticks_per_s = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self._last: dict[tuple[int, int], int] = {}  # (pid, start time) -> CPU ticks
        self.available = Path("/proc/self/stat").exists()

    def sample(self) -> None:
        if not self.available:
            return
        stats = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # the process ended meanwhile
            # After the name: state, ppid (1), ... utime (11), stime (12), ... start (19).
            stats[int(stat.parent.name)] = (
                int(fields[1]),
                int(fields[11]) + int(fields[12]),
                int(fields[19]),
            )
        tree = {self.root_pid}
        for pid in sorted(stats, key=lambda pid: stats[pid][2]):  # parents start first
            if stats[pid][0] in tree:
                tree.add(pid)
        for pid in tree & stats.keys():
            self._last[(pid, stats[pid][2])] = stats[pid][1]

    def seconds(self) -> float | None:
        if not self.available:
            return None
        return sum(self._last.values()) / self.ticks_per_s
