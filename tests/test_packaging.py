"""What `pip install attnlens` puts on a machine: one import name, the bundled models, and
optional parts that say what to install when they are missing."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from itertools import takewhile
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = tmp_path_factory.mktemp("build")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
         "--wheel-dir", str(out), str(ROOT)],
        capture_output=True, text=True, env={**os.environ, "TMPDIR": str(build)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (found,) = out.glob("attnlens-*.whl")
    return found


def test_every_folder_of_a_package_is_listed_as_one() -> None:
    """setuptools warns of each importable folder (its name a Python name) that holds files of
    a listed package but is not listed itself, and says a later version would leave it out:
    the bundled models' folders and the app's web files and decks must each be named in
    pyproject.toml (a new bundled model included)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed, folders = set(config["packages"]), config["package-dir"]

    def source(package: str) -> Path:
        root = max((p for p in folders if package == p or package.startswith(p + ".")), key=len)
        return ROOT / folders[root] / Path(*package[len(root) :].split(".")[1:])

    unlisted = set()
    for package in listed:
        top = source(package)
        for file in top.rglob("*"):
            inside = file.parent.relative_to(top).parts
            if not file.is_file() or "__pycache__" in inside:
                continue
            parts = tuple(takewhile(str.isidentifier, inside))  # as far as Python could import
            if parts and (name := ".".join((package, *parts))) not in listed:
                unlisted.add(name)
    assert not unlisted, f"add to [tool.setuptools] packages: {sorted(unlisted)}"
    assert {f"attnlens.model.bundled.{name}" for name in ("reverse", "translate")} <= listed


@pytest.mark.slow
def test_the_wheel_holds_only_attnlens_top_level_names(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"attnlens"}
    for part in ("record", "model", "analysis", "viz", "app"):
        assert f"attnlens/{part}/__init__.py" in names
    assert "attnlens/app/web/explore/page.py" in names
    assert "attnlens/app/teaching/decks/section3.deck" in names  # the bundled lecture
    assert "attnlens/app/classroom/static/follow.js" in names  # the page a student follows in
    assert "attnlens/model/bundled/reverse/model.safetensors" in names
    assert not [n for n in names if n.startswith("attnlens/tests") or "/helpers/" in n]


@pytest.mark.slow
def test_the_installed_wheel_loads_a_bundled_model(wheel: Path, tmp_path: Path) -> None:
    """Installed as a user would (not the editable checkout): import, load, trace."""
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target",
         str(target), str(wheel)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    code = (
        "import attnlens\n"
        f"assert attnlens.__file__.startswith({str(target)!r}), attnlens.__file__\n"
        "lens = attnlens.load('reverse')\n"
        "assert lens.decode('abc').output_text == 'cba'\n"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_a_missing_optional_part_says_what_to_install(tmp_path: Path) -> None:
    """Without transformers (the [hf] extra), a Hugging Face model is refused with the install
    line; our own models still load."""
    code = (
        "import sys\n"
        "sys.modules['transformers'] = None  # as if the extra were not installed\n"
        "import attnlens\n"
        "assert attnlens.load('reverse').decode('ab').output_text == 'ba'\n"
        "try:\n"
        "    attnlens.load('minilm')\n"
        "except attnlens.InputError as err:\n"
        "    print(err)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "pip install 'attnlens[hf]'" in done.stdout
