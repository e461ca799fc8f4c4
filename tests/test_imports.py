"""model → record → viz → app: imports only go that way."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "model": {"streamlit", "viz", "app", "plotly"},
    "viz": {"torch", "streamlit", "app", "transformers"},
}


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_does_not_import_what_is_downstream(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files
    bad = {str(f.relative_to(ROOT)): imported_roots(f) & FORBIDDEN[package] for f in files}
    assert not {f: b for f, b in bad.items() if b}


def test_only_the_adapter_imports_transformers() -> None:
    users = [f for f in (ROOT / "model").rglob("*.py") if "transformers" in imported_roots(f)]
    assert all("hf" in f.relative_to(ROOT / "model").parts for f in users), users


def test_drawing_saved_records_needs_no_torch() -> None:
    """viz and the record types load without torch (a notebook reading saved JSON)."""
    code = (
        "import sys, viz, model\n"
        "from model import Trace, DecodeRun\n"
        "loaded = [m for m in ('torch', 'transformers') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "model.load\n"  # the loaders still come on first use
        "assert 'torch' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
