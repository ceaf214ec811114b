"""The list that `make bench` prints: every `scripts/bench*.py`, what it measures and its
command line, read from the script's docstring (first paragraph: what it measures; last
paragraph: the command), so that the list cannot drift from the scripts.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

from benchmarks.common import SCRIPTS


@dataclass(frozen=True)
class Entry:
    command: str
    measures: str


def entries() -> list[Entry]:
    found = []
    for script in sorted(SCRIPTS.glob("bench*.py")):
        doc = ast.get_docstring(ast.parse(script.read_text())) or ""
        paragraphs = [" ".join(p.split()) for p in doc.split("\n\n") if p.strip()]
        if len(paragraphs) < 2 or not paragraphs[-1].startswith("python scripts/"):
            raise ValueError(f"{script}: its docstring must end with its command line")
        found.append(Entry(command=paragraphs[-1], measures=paragraphs[0]))
    return found


def report() -> str:
    lines = [
        "Benchmarks: each runs the suite and its baseline in fresh processes, alternating,",
        "and reports their ratio. Each takes minutes at its default size; read the figures",
        "from a quiet machine. docs/performance.md gives the sizes behind the published figures.",
        "",
    ]
    for entry in entries():
        lines.append(f"  {entry.command}")
        lines += textwrap.wrap(
            entry.measures, 88, initial_indent=" " * 6, subsequent_indent=" " * 6
        )
    return "\n".join(lines)
