"""record → model → analysis → viz → app: each part imports only what comes before it.

record (plain data) imports numpy and pandas only; model builds records and imports torch;
analysis measures records and models and draws nothing; viz draws records (and what analysis
measured on them) and never sees a model or torch; app is the front ends. Inside app, only the
Streamlit front end (app/web) imports streamlit; the command line, the server runtime and the
teaching logic do not, and none of them imports the web front end. The public package
(attnlens/) imports no front end, and no part before app imports it (`import attnlens` loads
model, analysis and viz). Inside model, net → decoding → training → lenses; inside viz, shared
(the palette, labels, style) is below every figure, heads below the rest, and no folder imports
the package itself. Tests mirror the code: a test of one part imports no part that comes after
it, and sits in the folder that mirrors its part's. Outside the lens package no code tests a
lens' concrete class or reaches inside one.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ORDER = ("record", "model", "analysis", "viz", "app")  # each may import only those before it
THIRD_PARTY = {"torch", "transformers", "plotly", "streamlit", "numpy", "pandas"}
PUBLIC = "attnlens"  # `import attnlens` brings in the public package: model, analysis and viz
FORBIDDEN = {  # per folder: top-level packages and parts of attnlens it may not import
    "record": {"torch", "transformers", "plotly", "streamlit", "model", "analysis", "viz", "app",
               PUBLIC},
    "model": {"streamlit", "plotly", "analysis", "viz", "app", PUBLIC},
    "analysis": {"streamlit", "plotly", "viz", "app", PUBLIC},
    "viz": {"torch", "streamlit", "transformers", "model", "app", PUBLIC},
    "attnlens": {"streamlit", "app"},  # the public package: no front end
}  # fmt: skip
APP_PARTS = {  # per folder of app/: what it may not import (streamlit, or another part of app)
    "cli": {"streamlit", "app.web"},
    "server": {"streamlit", "app.web", "app.cli", "app.teaching", "app.classroom"},
    "teaching": {"streamlit", "app.web", "app.cli", "app.classroom"},  # the lecture, alone
    "classroom": {"streamlit", "app.web", "app.cli", "app.teaching"},  # the live class, alone
    "web": {"app.cli"},
}
ACYCLIC = ("app/classroom", "app/teaching")  # folders whose modules import one another one way
MODEL_ORDER = ("net", "decoding", "training", "lenses")  # inside model/, each imports those before
VIZ_PARTS = {  # per folder of viz/: the folders it may import (viz/__init__.py gathers them all)
    "shared": set(),  # the palette, labels, margins, style: below every figure
    "heads": {"shared"},
    "lines": {"shared", "heads"},
    "decoding": {"shared", "heads"},
    "experiments": {"shared", "heads"},
    "measures": {"shared", "heads"},
    "lecture": {"shared", "heads", "decoding"},
}
LENS_PARTS = ("net", "tokenizer", "meta", "model", "runner")  # what a lens keeps to itself
CONCRETE_LENSES = {"OwnLens", "Seq2SeqLens", "CausalLens", "HFLens"}


def _modules(path: Path) -> set[str]:
    """Every module a file imports, absolute (`from attnlens.app import web` gives
    attnlens.app and attnlens.app.web)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return found


def imported(path: Path) -> set[str]:
    """Top-level names a file imports; attnlens.X counts as X (record, model, analysis, …)."""
    roots = set()
    for name in _modules(path):
        parts = name.split(".")
        roots.add(parts[1] if parts[0] == "attnlens" and len(parts) > 1 else parts[0])
    return roots & (set(ORDER) | THIRD_PARTY | {PUBLIC})


def parts_imported(path: Path, depth: int) -> set[str]:
    """attnlens parts a file imports, `depth` names deep: app.web, model.lenses, …"""
    names = set()
    for name in _modules(path):
        parts = name.split(".")
        if parts[0] == "attnlens" and len(parts) > depth:
            names.add(".".join(parts[1 : depth + 1]))
        elif parts[0] in THIRD_PARTY:
            names.add(parts[0])
    return names


def _bad(files: list[Path], forbidden: set[str], of: object = imported) -> dict[str, set[str]]:
    found = {str(f.relative_to(ROOT)): of(f) & forbidden for f in files}  # type: ignore[operator]
    return {f: b for f, b in found.items() if b}


def test_the_order_is_the_one_forbidden_states() -> None:
    for i, part in enumerate(ORDER):
        assert set(ORDER[i + 1 :]) <= FORBIDDEN.get(part, set(ORDER[i + 1 :])), part


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_does_not_import_what_comes_after_it(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files
    assert not _bad(files, FORBIDDEN[package])


@pytest.mark.parametrize("part", sorted(APP_PARTS))
def test_only_the_web_front_end_imports_streamlit(part: str) -> None:
    files = sorted((ROOT / "app" / part).rglob("*.py"))
    assert files
    assert not _bad(files, APP_PARTS[part], lambda f: parts_imported(f, 2))
    loose = [f.name for f in (ROOT / "app").glob("*.py") if f.name != "__init__.py"]
    assert not loose, "every file of app/ belongs to one of its parts"


def viz_parts(path: Path) -> set[str]:
    """The folders of viz/ a file imports (viz.heads, …), and `viz` for the package itself
    (`from attnlens.viz import …`, which loads every figure)."""
    package = {"viz"} if "attnlens.viz" in _modules(path) else set()
    return {p for p in parts_imported(path, 2) if p.startswith("viz.")} | package


@pytest.mark.parametrize("part", sorted(VIZ_PARTS))
def test_viz_folders_import_only_the_folders_below_them(part: str) -> None:
    files = sorted((ROOT / "viz" / part).rglob("*.py"))
    assert files
    others = {f"viz.{p}" for p in VIZ_PARTS if p != part and p not in VIZ_PARTS[part]}
    assert not _bad(files, others | {"viz"}, viz_parts)
    folders = {f.name for f in (ROOT / "viz").iterdir() if f.is_dir() and f.name != "__pycache__"}
    loose = [f.name for f in (ROOT / "viz").glob("*.py") if f.name != "__init__.py"]
    assert folders == set(VIZ_PARTS) and not loose, "every figure belongs to one folder of viz/"


def _folders(path: Path) -> set[str]:
    return {f.name for f in path.iterdir() if f.is_dir() and f.name != "__pycache__"}


def test_tests_mirror_the_folders_they_test() -> None:
    """tests/viz/X/ for viz/X/, tests/app/X/ for app/X/ (Chromium's tests of the web front end
    in tests/app/web/browser/), and every figure's test in its folder's."""
    for part in ("viz", "app", "app/web"):
        extra = {"browser"} if part == "app/web" else set()
        assert _folders(ROOT / "tests" / part) - extra <= _folders(ROOT / part), part
    assert not list((ROOT / "tests/viz").glob("test_*.py")), "each in its folder of tests/viz/"


def test_what_viz_takes_from_analysis_needs_no_model() -> None:
    """viz draws what analysis measured on records: those modules import no model, and viz
    never reaches the experiments, which run models."""
    pure = [f for f in sorted((ROOT / "analysis").glob("*.py"))]
    assert not _bad(pure, {"model", "torch", "transformers"})
    viz = sorted((ROOT / "viz").rglob("*.py"))
    assert not _bad(viz, {"analysis.experiments"}, lambda f: parts_imported(f, 2))


@pytest.mark.parametrize("i", range(len(MODEL_ORDER)))
def test_model_folders_import_only_those_before_them(i: int) -> None:
    folder, later = MODEL_ORDER[i], {f"model.{p}" for p in MODEL_ORDER[i + 1 :]}
    files = sorted((ROOT / "model" / folder).rglob("*.py"))
    assert not _bad(files, later, lambda f: parts_imported(f, 2))
    root_files = sorted((ROOT / "model").glob("*.py"))  # budget, progress: below them all
    assert not _bad(root_files, {f"model.{p}" for p in MODEL_ORDER}, lambda f: parts_imported(f, 2))


def test_the_lens_contract_does_not_import_training_tasks() -> None:
    assert not {m for m in _modules(ROOT / "model/lenses/lens.py") if ".training.tasks" in m}


@pytest.mark.parametrize("part", ORDER)
def test_tests_of_a_part_import_nothing_after_it(part: str) -> None:
    """Any test may load a model to make real records; nothing else that comes later."""
    later = set(ORDER[ORDER.index(part) + 1 :]) - {"model"}
    files = sorted((ROOT / "tests" / part).rglob("*.py"))
    assert files
    assert not _bad(files, later)


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph (module -> modules it imports), [] when there is none."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str]:
        if node in path:
            return path[path.index(node) :] + [node]
        if node in done:
            return []
        for nxt in sorted(graph.get(node, ())):
            found = visit(nxt, [*path, node])
            if found:
                return found
        done.add(node)
        return []

    for node in sorted(graph):
        found = visit(node, [])
        if found:
            return found
    return []


@pytest.mark.parametrize("folder", ACYCLIC)
def test_the_modules_of_a_folder_import_one_another_one_way(folder: str) -> None:
    """No cycle, not even through an import inside a function (the class store imported its two
    stores, which imported it back)."""
    package = "attnlens." + folder.replace("/", ".")
    files = sorted((ROOT / folder).glob("*.py"))
    graph = {
        f"{package}.{f.stem}": {
            m for m in _modules(f) if m.startswith(package + ".") and m.count(".") == 3
        }
        for f in files
    }
    assert graph and not _cycle(graph), " -> ".join(_cycle(graph))
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_only_the_adapter_imports_transformers() -> None:
    users = [f for f in (ROOT / "model").rglob("*.py") if "transformers" in imported(f)]
    assert users and all(f.is_relative_to(ROOT / "model" / "lenses" / "hf") for f in users)


def test_the_guard_catches_the_arrows_it_names(tmp_path: Path) -> None:
    """Each arrow this file forbids, written into a file, is found."""
    cases = {
        "attnlens": ("from attnlens.app.cli.main import main", FORBIDDEN["attnlens"], imported),
        "model": ("from attnlens.analysis import head_statistics", FORBIDDEN["model"], imported),
        "viz": ("import torch", FORBIDDEN["viz"], imported),
        "teaching": ("import streamlit as st", APP_PARTS["teaching"], None),
        "classroom": ("from attnlens.app.teaching import deck", APP_PARTS["classroom"], None),
        "net": ("from attnlens.model.lenses.budget import x", {"model.lenses"}, None),
        "record": ("import attnlens", FORBIDDEN["record"], imported),
        "analysis": ("from attnlens import head_statistics", FORBIDDEN["analysis"], imported),
        "heads": ("from attnlens.viz.lecture.reveal import x", {"viz.lecture"}, viz_parts),
        "lines": ("from attnlens.viz import head_heatmap", {"viz"}, viz_parts),
    }
    for name, (line, forbidden, of) in cases.items():
        f = tmp_path / f"{name}.py"
        f.write_text(line + "\n")
        found = (of or (lambda p: parts_imported(p, 2)))(f) & forbidden
        assert found, name


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
        for folder in ("app", "analysis", "viz", "bench", "record")
        for f in sorted((ROOT / folder).rglob("*.py"))
    ]
    outside += [f for f in (ROOT / "model").rglob("*.py") if "lenses" not in f.parts]
    peeks = {str(f.relative_to(ROOT)): _lens_peeks(f) for f in outside}
    assert not {f: p for f, p in peeks.items() if p}


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd)


def test_records_and_figures_load_without_torch(tmp_path: Path) -> None:
    """A notebook drawing saved records needs no torch; loading a model brings it in. Nor does
    importing attnlens bring in any front end."""
    done = _run(
        "import sys, attnlens, attnlens.viz, attnlens.record, attnlens.analysis\n"
        "from attnlens import Trace, DecodeRun, Lens, head_heatmap\n"
        "loaded = [m for m in ('torch', 'transformers', 'streamlit') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "assert not [m for m in sys.modules if m.startswith('attnlens.app')]\n"
        "attnlens.load('reverse')\n"
        "assert 'torch' in sys.modules and 'transformers' not in sys.modules\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr


def test_the_command_line_starts_without_torch(tmp_path: Path) -> None:
    """`attnlens serve` hands over to Streamlit, which imports torch itself: the command line
    parsing its arguments first took 2 s more of CPU for every server (and every `--help`)."""
    done = _run(
        "import sys\n"
        "from attnlens.app.cli.main import build_parser\n"
        "build_parser().parse_args(['serve', '--port', '8600'])\n"
        "loaded = [m for m in ('torch', 'transformers', 'streamlit') if m in sys.modules]\n"
        "assert not loaded, loaded\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr


def test_a_users_own_model_viz_and_app_modules_do_not_collide(tmp_path: Path) -> None:
    """The issue-12 bug: a notebook beside its own model.py could not import attnlens' viz."""
    for name in ("model", "viz", "app", "record", "analysis"):
        (tmp_path / f"{name}.py").write_text(f"WHOSE = 'the user's {name}'\n".replace("'s", "s"))
    done = _run(
        "import model, viz, app, record, analysis\n"
        "import attnlens\n"
        "from attnlens import viz as figures\n"
        "lens = attnlens.load('reverse')\n"
        "fig = figures.head_heatmap(lens.trace('abc'), 'cross', 1, 0)\n"
        "assert model.WHOSE == 'the users model' and viz.WHOSE == 'the users viz'\n"
        "assert fig.data\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
