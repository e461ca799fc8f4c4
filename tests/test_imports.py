"""model → record → viz → app: each layer imports only what is below it.

record (plain data) imports numpy and pandas only; model builds records; viz draws records and
never sees a model; app is the only place that imports streamlit. Outside the lens package no
code tests a lens' concrete class or reaches inside one.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = {"record", "model", "viz", "app"}
FORBIDDEN = {  # per folder: top-level packages, and parts of attnlens, it may not import
    "record": {"torch", "transformers", "plotly", "streamlit", "model", "viz", "app"},
    "model": {"streamlit", "plotly", "viz", "app"},
    "viz": {"torch", "streamlit", "transformers", "model", "app"},
}
LENS_PARTS = ("net", "tokenizer", "meta", "model", "runner")  # what a lens keeps to itself
CONCRETE_LENSES = {"OwnLens", "Seq2SeqLens", "CausalLens", "HFLens"}


def imported(path: Path) -> set[str]:
    """Top-level names a file imports; attnlens.X counts as X (record, model, viz, app)."""
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            roots.add(parts[1] if parts[0] == "attnlens" and len(parts) > 1 else parts[0])
    return roots & (OURS | {"torch", "transformers", "plotly", "streamlit", "numpy", "pandas"})


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_does_not_import_what_is_downstream(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files
    bad = {str(f.relative_to(ROOT)): imported(f) & FORBIDDEN[package] for f in files}
    assert not {f: b for f, b in bad.items() if b}


def test_only_the_adapter_imports_transformers() -> None:
    users = [f for f in (ROOT / "model").rglob("*.py") if "transformers" in imported(f)]
    assert users and all(f.is_relative_to(ROOT / "model" / "lenses" / "hf") for f in users)


def _lens_peeks(path: Path) -> list[str]:
    """isinstance(…, SomeLens) and lens.net / lens.tokenizer / … in one file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
            names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            found += [f"isinstance(…, {n})" for n in names & CONCRETE_LENSES]
        if isinstance(node, ast.Attribute) and node.attr in LENS_PARTS:
            owner = node.value
            if isinstance(owner, ast.Name) and "lens" in owner.id.lower():
                found.append(f"{owner.id}.{node.attr}")
    return found


def test_no_code_outside_the_lens_package_looks_inside_a_lens() -> None:
    outside = [
        f
        for folder in ("app", "viz", "bench", "record")
        for f in sorted((ROOT / folder).rglob("*.py"))
    ]
    outside += [f for f in (ROOT / "model").rglob("*.py") if "lenses" not in f.parts]
    peeks = {str(f.relative_to(ROOT)): _lens_peeks(f) for f in outside}
    assert not {f: p for f, p in peeks.items() if p}


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd)


def test_records_and_figures_load_without_torch(tmp_path: Path) -> None:
    """A notebook drawing saved records needs no torch; loading a model brings it in."""
    done = _run(
        "import sys, attnlens, attnlens.viz, attnlens.record\n"
        "from attnlens import Trace, DecodeRun, Lens, head_heatmap\n"
        "loaded = [m for m in ('torch', 'transformers') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "attnlens.load('reverse')\n"
        "assert 'torch' in sys.modules and 'transformers' not in sys.modules\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr


def test_a_users_own_model_viz_and_app_modules_do_not_collide(tmp_path: Path) -> None:
    """The issue-12 bug: a notebook beside its own model.py could not import attnlens' viz."""
    for name in ("model", "viz", "app", "record"):
        (tmp_path / f"{name}.py").write_text(f"WHOSE = 'the user's {name}'\n".replace("'s", "s"))
    done = _run(
        "import model, viz, app, record\n"
        "import attnlens\n"
        "from attnlens import viz as figures\n"
        "lens = attnlens.load('reverse')\n"
        "fig = figures.head_heatmap(lens.trace('abc'), 'cross', 1, 0)\n"
        "assert model.WHOSE == 'the users model' and viz.WHOSE == 'the users viz'\n"
        "assert fig.data\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
