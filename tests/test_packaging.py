"""The suite installs under its own name only: the wheel holds every package folder, the
env registry as `rlsuite.envs`, and nothing under a generic top-level name, so a user's
own `envs` package beside their work neither hides ours nor is hidden by it.

These run Python in a temporary directory with no PYTHONPATH, as a user does: pytest
itself has the repository root on sys.path (pyproject's `pythonpath`), where the
top-level `envs/` folder would be found under its folder name. A run from a directory
that holds a user's own `envs/` package is test_tracking.py's (one run for both, CI time).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.helpers import ROOT, user_env

# Top-level folders of the repository that must not be importable as such.
GENERIC_NAMES = ("envs", "experiments", "scripts", "tests")
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc")


def python(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=user_env(),
    )


def source_files(folder: Path, package: str) -> set[str]:
    """Where each Python file under `folder` lands in a wheel, as package `package`
    (links to folders are not followed: `rlsuite/envs` may link to `envs/`)."""
    found = set()
    for directory, _, files in os.walk(folder):
        relative = Path(directory).relative_to(folder)
        if "__pycache__" not in relative.parts:
            found |= {str(Path(package, relative, f)) for f in files if f.endswith(".py")}
    return found


def test_wheel_holds_every_package_under_rlsuite_only(tmp_path: Path) -> None:
    """The wheel setuptools builds from pyproject: the suite's Python files, the env
    registry's as `rlsuite/envs/`, and no other top-level name."""
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(ROOT / "pyproject.toml", source)
    shutil.copy(ROOT / "README.md", source)
    for folder in ("rlsuite", "envs"):
        shutil.copytree(ROOT / folder, source / folder, symlinks=True, ignore=SKIPPED)
    build = "from setuptools import build_meta; print(build_meta.build_wheel('dist'))"
    done = python("-c", build, cwd=source)
    assert done.returncode == 0, done.stderr[-3000:]
    wheel = source / "dist" / done.stdout.strip().splitlines()[-1]
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {name.split("/")[0] for name in names} == {"rlsuite", dist_info(wheel)}
    expected = source_files(ROOT / "rlsuite", "rlsuite") | source_files(
        ROOT / "envs", "rlsuite/envs"
    )
    assert {name for name in names if name.endswith(".py")} == expected
    assert {"rlsuite/py.typed", "rlsuite/envs/py.typed"} <= names


def dist_info(wheel: Path) -> str:
    name, version = wheel.name.split("-")[:2]
    return f"{name}-{version}.dist-info"


def test_nothing_importable_under_a_generic_name(tmp_path: Path) -> None:
    code = (
        "import importlib.util\n"
        f"for name in {GENERIC_NAMES!r}:\n"
        "    spec = importlib.util.find_spec(name)\n"
        "    print(name, spec.origin if spec else None)\n"
    )
    done = python("-c", code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(GENERIC_NAMES), done.stdout
    for line in lines:
        origin = line.split(" ", 1)[1]
        assert origin == "None" or not Path(origin).is_relative_to(ROOT), line


def test_env_registry_imports_and_lists_from_elsewhere(tmp_path: Path) -> None:
    imported = python("-c", "import rlsuite.envs; print(rlsuite.envs.make)", cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    listed = python("-m", "rlsuite.envs", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "classic/cartpole" in listed.stdout.split()
    # It takes no options: one it does not know is one line, exit 2 (was ignored, exit 0).
    refused = python("-m", "rlsuite.envs", "--all", cwd=tmp_path)
    assert refused.returncode == 2 and "unrecognized arguments: --all" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
