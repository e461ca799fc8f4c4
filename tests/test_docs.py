"""The README and docs/ are the contract (CONTRACTS.md): what they point at must exist.

Checked in README.md and every docs/*.md, each finding a test named by file and line:

- the README stays a front page: at most 250 lines, holding the two commands `make run` and
  `make test`; every docs page opens with a one-line title and a link back to the README;
- every relative link and image points to a file that exists, and an anchor (`#…`) to a heading
  of the target page (GitHub's slugs: lower case, punctuation dropped, spaces to `-`, a repeated
  heading gets `-1`, `-2`, …);
- every repository path quoted in backticks (starting with a top folder such as `app/`,
  `model/` or `bench/`, ending in a file extension or `/`) exists;
- every command quoted in backticks or a fenced block resolves: `attnlens SUBCOMMAND …` parses
  with the command line's own parser, `python -m bench[.X]` names a module of bench/, and
  `make X` a target of the Makefile.

Which `attnlens` lines are parsed: the concrete examples. Environment assignments before the
command (`ATTNLENS_SERVER_MODE=1 attnlens serve …`) and a trailing `# comment` are dropped
first; then a line with a word holding `[`, `|` or an ellipsis (`…`, `...`) is a usage synopsis
listing alternatives (`[--format json|csv|npz]`) or an elided example, not a command anyone
types, and is left out. Placeholders in capitals (`MODEL`, `RUN.json`) parse as any value
would. A bare `attnlens decode` names a command in a sentence: that command must exist.
"""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TOP_FOLDERS = ("app", "model", "analysis", "viz", "record", "tests", "bench", "docs", "attnlens")
README_MAX_LINES = 250

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
CODE_SPAN = re.compile(r"(?<!`)`([^`]+)`(?!`)")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
REPO_PATH = re.compile(rf"^(?:{'|'.join(TOP_FOLDERS)})/[\w./-]*(?:\.\w+|/)$")
ENV_ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=\S*$")
BENCH_MODULE = re.compile(r"\bpython -m (bench(?:\.\w+)*)")
MAKE_TARGET = re.compile(r"(?:^|[\s;(])make ([a-z][\w-]*)")
SYNOPSIS = ("[", "|", "…", "...")


@dataclass(frozen=True)
class Quote:
    """Something a page says, where it says it."""

    page: Path
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}: {self.text}"


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _blank(match: re.Match[str]) -> str:
    """The match replaced by spaces, its newlines kept, so offsets and lines stay put."""
    return re.sub(r"[^\n]", " ", match.group(0))


def _prose(text: str) -> str:
    """The page without fenced blocks (blanked, lines kept)."""
    return FENCE.sub(_blank, text)


def _code_lines(page: Path) -> list[Quote]:
    """Every line of a fenced block, and every code span (its whitespace folded to spaces)."""
    text = page.read_text()
    found = []
    for block in FENCE.finditer(text):
        first = _line_of(text, block.start())
        for i, line in enumerate(block.group(0).splitlines()[1:-1], start=1):
            found.append(Quote(page, first + i, line.strip()))
    prose = _prose(text)
    for span in CODE_SPAN.finditer(prose):
        found.append(Quote(page, _line_of(prose, span.start()), " ".join(span.group(1).split())))
    return found


def _links(page: Path) -> list[Quote]:
    """Every Markdown link and image target outside code."""
    prose = CODE_SPAN.sub(_blank, _prose(page.read_text()))
    return [Quote(page, _line_of(prose, m.start()), m.group(1)) for m in LINK.finditer(prose)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its text
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor a page's headings give, repeats numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.finditer(_prose(page.read_text())):
        base = slug(heading.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def _ids(quotes: list[Quote]) -> list[str]:
    return [str(q)[:120] for q in quotes]


LINKS = [q for page in PAGES for q in _links(page) if not re.match(r"^[a-z][\w+.-]*:", q.text)]
PATHS = [q for page in PAGES for q in _code_lines(page) if REPO_PATH.match(q.text)]
CODE = [q for page in PAGES for q in _code_lines(page)]


def _command(line: str) -> list[str] | None:
    """The words of an `attnlens …` example line, else None (see the module's docstring)."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return None
    if any(mark in word for word in words for mark in SYNOPSIS):
        return None
    while words and ENV_ASSIGNMENT.match(words[0]):
        words = words[1:]
    return words if len(words) >= 2 and words[0] == "attnlens" else None


COMMANDS = [q for q in CODE if _command(q.text)]
BENCH = [Quote(q.page, q.line, m) for q in CODE for m in BENCH_MODULE.findall(q.text)]
MAKE = [Quote(q.page, q.line, m) for q in CODE for m in MAKE_TARGET.findall(q.text)]


def test_the_readme_is_a_front_page() -> None:
    text = (ROOT / "README.md").read_text()
    lines = len(text.splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines"
    assert "make run" in text and "make test" in text


@pytest.mark.parametrize("page", PAGES[1:], ids=lambda p: p.name)
def test_a_docs_page_opens_with_its_title_and_the_way_back(page: Path) -> None:
    first, *rest = page.read_text().splitlines()
    assert first.startswith("# "), "the first line is the page's title"
    back = [line for line in rest[:4] if "(../README.md" in line]
    assert back, "a link back to the README within the first lines"


def test_each_kind_of_check_finds_something() -> None:
    """A pattern that stopped matching would pass every page silently."""
    assert LINKS and PATHS and COMMANDS and BENCH and MAKE
    assert {"run", "test"} <= {q.text for q in MAKE}


@pytest.mark.parametrize("link", LINKS, ids=_ids(LINKS))
def test_a_relative_link_points_to_a_file_and_heading_that_exist(link: Quote) -> None:
    target, _, anchor = link.text.partition("#")
    path = (link.page.parent / target).resolve() if target else link.page
    assert path.is_relative_to(ROOT), f"{link}: outside the repository"
    assert path.exists(), f"{link}: no such file"
    if anchor:
        assert path.suffix == ".md", f"{link}: an anchor into a file that is not Markdown"
        assert anchor in anchors(path), f"{link}: no heading gives #{anchor}"


@pytest.mark.parametrize("quoted", PATHS, ids=_ids(PATHS))
def test_a_quoted_repository_path_exists(quoted: Quote) -> None:
    assert (ROOT / quoted.text).exists(), f"{quoted}: no such path"


@pytest.fixture(scope="module")
def parser() -> argparse.ArgumentParser:
    from attnlens.app.cli.main import build_parser

    return build_parser()


def _subcommands(parser: argparse.ArgumentParser) -> set[str]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {name for a in actions for name in a.choices}


@pytest.mark.parametrize("quoted", COMMANDS, ids=_ids(COMMANDS))
def test_a_quoted_command_parses(quoted: Quote, parser: argparse.ArgumentParser) -> None:
    words = _command(quoted.text)
    assert words is not None
    from attnlens.app.cli.usage import UsageError

    if len(words) == 2:  # `attnlens decode` names a command in a sentence: it must exist
        assert words[1] in _subcommands(parser), f"{quoted}: no such command"
        return
    try:
        parser.parse_args(words[1:])
    except (UsageError, SystemExit) as err:
        pytest.fail(f"{quoted}: {err}")


@pytest.mark.parametrize("module", BENCH, ids=_ids(BENCH))
def test_a_quoted_bench_module_exists(module: Quote) -> None:
    parts = module.text.split(".")
    path = ROOT.joinpath(*parts)
    assert (path / "__main__.py").exists() or path.with_suffix(".py").exists(), str(module)


@pytest.mark.parametrize("target", MAKE, ids=_ids(MAKE))
def test_a_quoted_make_target_exists(target: Quote) -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(rf"^{re.escape(target.text)}:", makefile, re.M), f"{target}: no such target"
