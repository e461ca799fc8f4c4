"""Where the beam tree draws each kept hypothesis: a row it keeps from step to step.

Beam search re-ranks its beams at every step, so drawn at their ranks (beam 0 on top) the
hypotheses jump rows and, at 8 beams, the edges cross into a mesh. Here a hypothesis keeps its
parent's row: each live beam's best kept child stays on its parent's row, and the other children
take the free rows nearest their parent's. The rank is still in each node's hover.
"""

from __future__ import annotations

from attnlens.record.decode import BeamStep, DecodeRun

Node = tuple[int, int]  # (step, beam)
STAY = 4  # how much more a parent's best child weighs in keeping its parent's row


def kept(run: DecodeRun, step: int) -> list[BeamStep]:
    """The beams a step kept (alive, then finished, each by rank)."""
    return [b for b in run.steps[step].beams if b.status != "pruned"]


def row_count(run: DecodeRun) -> int:
    """How many rows the kept beams need: the most any one step kept."""
    return max(len(kept(run, r.step)) for r in run.steps)


def rows_of(run: DecodeRun) -> dict[Node, int]:
    """The row of every kept node, 0..row_count - 1. Each step's kept beams are drawn in the
    order of their parents' rows (then by rank), so no two edges cross; within that order
    each takes the row nearest its parent's, a parent's best child above all (STAY times as
    much), so a hypothesis that goes on stays on its row."""
    rows = row_count(run)
    placed: dict[Node, int] = {}
    for record in run.steps:
        t = record.step
        beams = kept(run, t)
        want = [b.beam if b.parent is None else placed[(t - 1, b.parent)] for b in beams]
        order = _drawing_order(beams, want)
        weights = [STAY if beams[i].parent is not None and i == _first(beams, i) else 1
                   for i in order]  # fmt: skip
        chosen = _monotone_rows([want[i] for i in order], weights, rows)
        placed.update({(t, beams[i].beam): row for i, row in zip(order, chosen, strict=True)})
    return placed


def _first(beams: list[BeamStep], i: int) -> int:
    """The index of the best kept sibling of beams[i] (itself when it is the best)."""
    return next(j for j, b in enumerate(beams) if b.parent == beams[i].parent)


def _drawing_order(beams: list[BeamStep], want: list[int]) -> list[int]:
    """The kept beams top to bottom: by their parents' rows (so no edges cross), each parent's
    best child in the middle of its siblings, the others above and below it by turns (so the
    best one has room to stay on its parent's row)."""
    groups: dict[int, list[int]] = {}
    for i in range(len(beams)):
        groups.setdefault(want[i], []).append(i)  # by rank: the best first
    order: list[int] = []
    for row in sorted(groups):
        best, *rest = groups[row]
        if beams[best].parent is None:  # step 0: each its own row, by rank
            order += groups[row]
            continue
        order += [*rest[0::2][::-1], best, *rest[1::2]]
    return order


def _monotone_rows(want: list[int], weights: list[int], rows: int) -> list[int]:
    """Strictly increasing rows in 0..rows - 1, one per item, nearest (weighted) to the rows
    each wants: a small dynamic programme over (item, row)."""
    n = len(want)
    inf = float("inf")
    cost = [[inf] * rows for _ in range(n)]
    back = [[-1] * rows for _ in range(n)]
    for i in range(n):
        best, arg = (0.0, -1) if i == 0 else (inf, -1)
        for r in range(rows):
            if i and r and cost[i - 1][r - 1] < best:
                best, arg = cost[i - 1][r - 1], r - 1
            if best < inf:
                cost[i][r] = best + weights[i] * abs(r - want[i])
                back[i][r] = arg
    row = min(range(rows), key=lambda r: cost[n - 1][r]) if n else -1
    out = []
    for i in range(n - 1, -1, -1):
        out.append(row)
        row = back[i][row]
    return out[::-1]


def edges(run: DecodeRun, rows: dict[Node, int]) -> list[tuple[int, int, int]]:
    """Every drawn edge as (step, parent's row, child's row), the child at `step`."""
    return [
        (r.step, rows[(r.step - 1, b.parent)], rows[(r.step, b.beam)])
        for r in run.steps[1:]
        for b in r.beams
        if b.parent is not None and b.status != "pruned"
    ]


def crossings(drawn: list[tuple[int, int, int]]) -> int:
    """How many pairs of edges between the same two steps cross (share no end and swap
    order); what makes a tree a mesh."""
    count = 0
    for i, (t, a0, a1) in enumerate(drawn):
        for u, b0, b1 in drawn[i + 1 :]:
            if u == t and (a0 - b0) * (a1 - b1) < 0:
                count += 1
    return count


def rank_rows(run: DecodeRun) -> dict[Node, int]:
    """Every kept node at its rank (the tree as it was drawn before rows were kept)."""
    return {(r.step, b.beam): b.beam for r in run.steps for b in kept(run, r.step)}
