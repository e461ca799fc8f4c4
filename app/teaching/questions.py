"""Predict, then reveal: multiple-choice questions asked only where the answer is sharp.

A question is fair when one answer clearly stands out: the head puts at least SHARP of the
asked row's weight on one key, one head does its job for at least SHARP of the rows and
MARGIN more than any other, greedy's next token has at least SHARP probability. Anything
less is a NoQuestion that says why, and the slide asks nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from attnlens.record.decode import DecodeRun
from attnlens.record.picking import KIND_TITLES, allowed_of, attention_of, true_source_hits
from attnlens.record.trace import Kind, Trace
from attnlens.viz.decoding.beam import followed, followed_row
from attnlens.viz.shared.labels import visible

SHARP = 0.5
MARGIN = 0.2
N_OPTIONS = 4
AUTO_STEPS = 12  # an automatic greedy question looks this far into the output
SPECIAL = ("<s>", "</s>", "<pad>", "<unk>", "[CLS]", "[SEP]", "[PAD]")
Job = Literal["previous", "alignment"]


@dataclass(frozen=True)
class Question:
    """A multiple-choice question, its answer, one line of why, and what the reveal shows."""

    ask: str  # the deck's question kind
    prompt: str
    options: tuple[str, ...]
    answer: int
    why: str
    kind: Kind | None = None
    layer: int | None = None
    head: int | None = None
    query: int | None = None  # the asked row ("where")
    key: int | None = None  # the right cell's column ("where")
    step: int | None = None  # the asked decoding step ("greedy-next")
    scores: tuple[float, ...] = ()  # per head ("previous-head", "alignment-head")

    @property
    def id(self) -> str:
        """The same question on the same view has the same id, in every session."""
        blob = json.dumps([self.ask, self.prompt, self.options, self.answer], ensure_ascii=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "options": list(self.options), "scores": list(self.scores)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Question:
        values = {**data, "options": tuple(data["options"]), "scores": tuple(data["scores"])}
        return cls(**values)


@dataclass(frozen=True)
class NoQuestion:
    """Why a slide asks nothing here: the answer would not be sharp."""

    reason: str


def label(position: int, token: str) -> str:
    """An option naming a position: '3 · e' (plain text, escaped where it is drawn)."""
    return f"{position} · {visible(token)}"


def where_question(
    trace: Trace,
    kind: Kind,
    layer: int,
    head: int | None = None,
    query: int | None = None,
    reference: Sequence[int] | None = None,
    taken: Collection[int | None] = (),
) -> Question | NoQuestion:
    """ "Where will this head look?" on a row where it puts at least SHARP on one key; with no
    head or row given, the sharpest (preferring rows whose answer is not a special token) of
    the heads not `taken` (asked about already: a deck asks of another head the next time)."""
    weights = attention_of(trace, kind)[layer]  # (H, Q, K)
    allowed = allowed_of(trace, kind)  # (Q, K)
    q_tokens, k_tokens = trace.shown(kind)
    heads = [h for h in range(weights.shape[0]) if h not in taken] if head is None else [head]
    if not heads:
        return NoQuestion(f"every head of layer {layer} was asked about on an earlier slide")
    rows = [q for q in range(weights.shape[1]) if allowed[q].sum() >= 3]
    rows = rows if query is None else [q for q in rows if q == query]
    if not rows:  # a short input: every row sees fewer than 3 keys, so any guess is a coin toss
        which = f"row {query} sees" if query is not None else "every row sees"
        return NoQuestion(
            f"{which} fewer than 3 keys: too few to ask where a head looks (a longer input "
            "gets a question)"
        )
    best: tuple[tuple[bool, float], int, int] | None = None
    strongest = 0.0
    for h in heads:
        for q in rows:
            k = int(np.argmax(weights[h, q]))
            w = float(weights[h, q, k])
            strongest = max(strongest, w)
            rank = (k_tokens[k] not in SPECIAL and q_tokens[q] not in SPECIAL, w)
            if w >= SHARP and (best is None or rank > best[0]):
                best = (rank, h, q)
    if best is None:
        who = f"head {head}" if head is not None else f"any head of layer {layer}"
        row = f"row {query}" if query is not None else "any row with 3 keys or more"
        return NoQuestion(
            f"{who} is diffuse on {row}: its strongest weight is {strongest:.2f}, "
            f"below {SHARP}, too close to call for a fair question"
        )
    _, h, q = best
    return _where(weights[h, q], allowed[q], kind, layer, h, q, q_tokens, k_tokens, reference)


def _where(
    row: np.ndarray,
    allowed: np.ndarray,
    kind: Kind,
    layer: int,
    head: int,
    query: int,
    q_tokens: Sequence[str],
    k_tokens: Sequence[str],
    reference: Sequence[int] | None,
) -> Question:
    order = [int(k) for k in np.argsort(-row, kind="stable") if allowed[k]]
    answer, runner = order[0], order[1]
    picked = sorted(order[:N_OPTIONS])  # in position order: the first is not always right
    because = _because(kind, query, answer, reference)
    return Question(
        ask="where",
        prompt=f"{KIND_TITLES[kind].capitalize()}, layer {layer}, head {head}: which key will "
        f"query {label(query, q_tokens[query])} give the most weight?",
        options=tuple(label(k, k_tokens[k]) for k in picked),
        answer=picked.index(answer),
        why=f"Head {head} puts {row[answer]:.0%} of that row on {label(answer, k_tokens[answer])}"
        f"{because}; the runner-up, {label(runner, k_tokens[runner])}, gets {row[runner]:.0%}.",
        kind=kind,
        layer=layer,
        head=head,
        query=query,
        key=answer,
    )


def _because(kind: Kind, query: int, key: int, reference: Sequence[int] | None) -> str:
    """What the answer is, where it is something a person would name."""
    if kind == "cross" and reference is not None and tuple(reference[query : query + 1]) == (key,):
        return ", the source of the output token this query predicts"
    if kind != "cross" and key == query - 1:
        return ", the token just before"
    if kind != "cross" and key == query:
        return ", itself"
    return ""


def head_scores(
    trace: Trace, kind: Kind, layer: int, job: Job, reference: Sequence[int] | None
) -> np.ndarray:
    """(H,) the share each head of a layer does the job on: mean weight on the previous
    position, or the share of output tokens whose largest weight is on their true source."""
    weights = attention_of(trace, kind)[layer]  # (H, Q, K)
    if job == "alignment":
        if reference is None or kind != "cross":
            raise ValueError("alignment needs cross-attention and the true source of each token")
        hits = true_source_hits(weights[None], reference)[0]  # (H,)
        return np.asarray(hits, np.float64) / max(1, len(reference))
    rows = np.arange(1, weights.shape[1])
    if rows.size == 0:
        return np.zeros(weights.shape[0])
    return np.asarray(weights[:, rows, rows - 1].mean(-1), np.float64)


JOB_WORDS = {
    "previous": ("the previous-token head", "of its weight on the token just before"),
    "alignment": ("the alignment head", "of the output tokens' weight peaks on their source"),
}


def head_question(
    trace: Trace,
    kind: Kind,
    job: Job,
    layer: int | None = None,
    reference: Sequence[int] | None = None,
) -> Question | NoQuestion:
    """ "Which head is the previous-token (alignment) head?" when one head of the layer (or of
    the layer where one stands out most) does it for SHARP of the rows, MARGIN ahead."""
    if job == "alignment" and (reference is None or kind != "cross"):
        return NoQuestion(
            "this model's task cannot tell the true source of each output token "
            "here, so there is no alignment head to ask about"
        )
    layers = range(attention_of(trace, kind).shape[0]) if layer is None else [layer]
    scored = [(head_scores(trace, kind, lay, job, reference), lay) for lay in layers]
    fair = [(s, lay) for s, lay in scored if _lead(s)[0] >= SHARP and _lead(s)[1] >= MARGIN]
    name, doing = JOB_WORDS[job]
    if not fair:
        s, lay = max(scored, key=lambda x: _lead(x[0])[0])
        top = np.argsort(-s)[:2]
        shares = ", ".join(f"head {h} {s[h]:.0%}" for h in top)
        return NoQuestion(
            f"no single head stands out as {name} (best, layer {lay}: {shares}; a "
            f"fair question needs {SHARP:.0%} and a {MARGIN:.0%} lead)"
        )
    s, lay = max(fair, key=lambda x: _lead(x[0])[1])
    order = [int(h) for h in np.argsort(-s, kind="stable")]
    picked = sorted(order[:8]) if len(s) <= 8 else sorted(order[:N_OPTIONS])
    answer, runner = order[0], order[1]
    return Question(
        ask=f"{job}-head",
        prompt=f"{KIND_TITLES[kind].capitalize()}, layer {lay}: which head is {name}?",
        options=tuple(f"head {h}" for h in picked),
        answer=picked.index(answer),
        why=f"Head {answer}: {s[answer]:.0%} {doing}; the next best, head {runner}, "
        f"{s[runner]:.0%}.",
        kind=kind,
        layer=lay,
        head=answer,
        scores=tuple(float(x) for x in s),
    )


def _lead(scores: np.ndarray) -> tuple[float, float]:
    """(best score, its lead over the runner-up)."""
    top = np.sort(scores)[::-1]
    return float(top[0]), float(top[0] - (top[1] if top.size > 1 else 0.0))


def greedy_question(run: DecodeRun, step: int | None = None) -> Question | NoQuestion:
    """ "What will greedy pick next?" at a step whose top token has at least SHARP; with no step
    given, the least certain such step among the first AUTO_STEPS (the interesting one)."""
    steps = range(min(AUTO_STEPS, len(run.steps))) if step is None else [step]
    fair = [t for t in steps if _top(run, t)[0].prob >= SHARP and len(_top(run, t)) >= 2]
    if not fair:
        where = f"at step {step}" if step is not None else "at any step"
        return NoQuestion(
            f"the model is unsure {where}: no next token has {SHARP:.0%} "
            "probability, so greedy's pick is a near coin toss"
        )
    t = min(fair, key=lambda s: _top(run, s)[0].prob)
    cands = _top(run, t)[:N_OPTIONS]
    picked = sorted(range(len(cands)), key=lambda i: cands[i].token)
    so_far = _so_far([b.token for b in followed(run, t)[:t]]) or "the start"
    top, runner = cands[0], cands[1]
    return Question(
        ask="greedy-next",
        prompt=f"After “{so_far}”, which token will greedy decoding pick next?",
        options=tuple(visible(cands[i].token) for i in picked),
        answer=picked.index(0),
        why=f"Greedy takes the most probable token: {visible(top.token)} at {top.prob:.0%} "
        f"(next: {visible(runner.token)} at {runner.prob:.0%}).",
        step=t,
    )


def _so_far(tokens: list[str], keep: int = 24) -> str:
    """The output so far as a person reads it: characters run together (a space as ␣), words
    spaced; only the last `keep` characters or words."""
    chars = all(len(t) == 1 for t in tokens)
    cut = tokens[-keep:]
    text = ("" if chars else " ").join(visible(t) for t in cut)
    return ("…" if len(cut) < len(tokens) else "") + text


def _top(run: DecodeRun, step: int) -> tuple[Any, ...]:
    return run.steps[step].candidates[followed_row(run, step) or 0]  # greedy: one row


def beam_question(greedy: DecodeRun, beam: DecodeRun) -> Question:
    """ "Will beam search beat greedy here?": yes exactly when beam's output differs and is
    likelier (a higher sum of log-probabilities)."""
    better = beam.output_tokens != greedy.output_tokens and beam.score > greedy.score + 1e-6
    k = beam.params.get("beam_size", "k")
    g, b = visible(greedy.output_text), visible(beam.output_text)
    why = (
        f"Beam search ({k} kept alive) finds “{b}” at {beam.score:.3f}, likelier than greedy's "
        f"“{g}” at {greedy.score:.3f}: a less likely token early led to a better whole."
        if better
        else f"Beam search ({k} kept alive) ends on “{b}” ({beam.score:.3f}); greedy's “{g}” "
        f"({greedy.score:.3f}) is as likely or likelier: taking the best token each step paid."
    )
    return Question(
        ask="beam-vs-greedy",
        prompt=f"Greedy writes “{g}”. Will beam search (beam size {k}) find a likelier output?",
        options=("Yes: a different, likelier output", "No: nothing likelier than greedy's"),
        answer=0 if better else 1,
        why=why,
    )


EDGE = 0.02  # a carried share this close to a band's edge is too close to call


def carried_question(
    trace: Trace, kind: Kind, layer: int, carried: np.ndarray, head: int | None = None
) -> Question | NoQuestion:
    """ "This head puts w of its weight on the special tokens: what share of what it carries
    comes from them?" (Kobayashi et al. 2020), on the head of the layer (or `head`) with the
    most weight on them, when that is at least SHARP; carried: (L, H, K) ‖f_h(xⱼ)‖. The
    options are bands of the weight share: under a quarter of it, a quarter to a half, a half
    to all of it, more."""
    weights = attention_of(trace, kind)[layer].astype(np.float64)  # (H, Q, K)
    keys = [j for j, t in enumerate(trace.shown(kind)[1]) if t in SPECIAL]
    if not keys:
        return NoQuestion("the keys hold no special token ([CLS], [SEP], <s>, …) to ask about")
    weight = weights[:, :, keys].sum(-1).mean(-1)  # (H,)
    carrying = weights.sum(1) * carried[layer]  # (H, K): Σᵢ αᵢⱼ ‖f(xⱼ)‖
    norm = carrying[:, keys].sum(-1) / np.maximum(carrying.sum(-1), 1e-30)  # (H,)
    h = int(np.argmax(weight)) if head is None else head
    w, n = float(weight[h]), float(norm[h])
    if w < SHARP:
        return NoQuestion(
            f"no head of layer {layer} puts {SHARP:.0%} of its weight on the special tokens "
            f"(head {h}: {w:.0%}): nothing striking to ask about"
        )
    edges = (w / 4, w / 2, w)
    if min(abs(n - e) for e in edges) < EDGE:
        return NoQuestion(f"head {h} carries {n:.0%} from them, too close to a band's edge")
    options = (f"under {edges[0]:.0%}", f"{edges[0]:.0%} to {edges[1]:.0%}",
               f"{edges[1]:.0%} to {edges[2]:.0%}", f"over {edges[2]:.0%}")  # fmt: skip
    return Question(
        ask="carried",
        prompt=f"Layer {layer}, head {h} puts {w:.0%} of its weight on the special tokens. "
        "What share of what it carries comes from them?",
        options=options,
        answer=int(np.searchsorted(edges, n)),
        why=f"{n:.0%}: the special tokens' vectors are short, so the weight they take "
        f"carries little (‖f(x)‖ on them {np.mean(carried[layer, h, keys]):.2f}, elsewhere "
        f"{np.mean(np.delete(carried[layer, h], keys)):.2f}).",
        kind=kind,
        layer=layer,
        head=h,
        scores=tuple(float(x) for x in norm),
    )
