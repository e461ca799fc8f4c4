"""One position's residual stream kept as the sum of the parts that wrote it, carried through
norms frozen as the forward pass computed them (record/attribution.py says why that is exact).

A LayerNorm with its mean μ and scale σ held fixed is affine: LN(Σ_c c) = Σ_c γ ⊙ (c − mean c)/σ
+ β, since centering is linear; an RMSNorm with its scale held fixed is linear: γ ⊙ c / rms. So
every part goes through the norm on its own and the norm's β becomes a part of its own. The rows
are float64; each norm is checked against the model's own output before the next part is added.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from attnlens.record.attribution import BIASES, LogitAttribution
from attnlens.record.errors import InputError

Label = tuple[object, ...]  # ("embeddings",), ("head", kind, layer, head), ("mlp", layer),
# ("bias", one of BIASES)
MATCH = 1e-4  # how close a frozen norm's output must be to the model's own, relative


class MismatchError(InputError):
    """The parts do not add up to what the model computed: the model is not built as stated."""


class Stream:
    """The parts of one position's residual stream, each a float64 row of d_model numbers."""

    def __init__(self, label: Label, vector: torch.Tensor) -> None:
        self.rows = vector.double().reshape(1, -1)  # (n, d_model)
        self.labels: list[Label] = [label]

    def extend(self, other: Stream) -> None:
        """Another stream's parts added to this one's (a sublayer's, carried through its own
        norm before it reaches the residual stream)."""
        self.add(other.labels, other.rows)

    def add(self, labels: Sequence[Label], rows: torch.Tensor) -> None:
        """Parts written by one sublayer, (len(labels), d_model)."""
        self.rows = torch.cat([self.rows, rows.double().reshape(len(labels), -1)])
        self.labels += list(labels)

    def total(self) -> torch.Tensor:
        return self.rows.sum(0)  # (d_model,)

    def check(self, want: torch.Tensor, what: str) -> None:
        """Refuse when the parts do not sum to `want`, what the model computed there."""
        want = want.double().reshape(-1)
        gap = float((self.total() - want).abs().max())
        if gap > MATCH * max(1.0, float(want.abs().max())):
            raise MismatchError(f"the parts of {what} miss what the model computed by {gap:.3g}")

    def layer_norm(
        self,
        gain: torch.Tensor,
        bias: torch.Tensor | None,
        eps: float,
        out: torch.Tensor,
        what: str,
    ) -> None:
        """Through a LayerNorm with μ and σ frozen from the parts' own sum; `out` is the model's
        own output there, which the frozen norm must give."""
        z = self.total()
        sigma = torch.sqrt(z.var(unbiased=False) + eps)
        self.rows = (self.rows - self.rows.mean(-1, keepdim=True)) * (gain.double() / sigma)
        if bias is not None:
            self.add([("bias", "norms")], bias)
        self.check(out, what)

    def rms_norm(self, gain: torch.Tensor, eps: float, out: torch.Tensor, what: str) -> None:
        """Through an RMSNorm x · gain / rms(x) with rms frozen from the parts' own sum."""
        rms = torch.sqrt(self.total().pow(2).mean() + eps)
        self.rows = self.rows * (gain.double() / rms)
        self.check(out, what)

    def linear(self, weight: torch.Tensor) -> None:
        """Through a linear map without bias (a projection after the final norm)."""
        self.rows = self.rows @ weight.double().T

    def scale(self, factor: float) -> None:
        """Times a number (a scale on the stream before the unembedding)."""
        self.rows = self.rows * factor

    def logits(self, unembed: torch.Tensor) -> np.ndarray:
        """(n,) float64: each part's share of the logit, unembed the token's row of W_U."""
        out: np.ndarray = (self.rows @ unembed.double()).cpu().numpy()
        return out


@dataclass(frozen=True)
class Shape:
    """What an attribution record is laid out by: the kinds of heads, (layers, heads) each."""

    kinds: dict[str, tuple[int, int]]
    layers: int  # decoder layers (each has one MLP)


def attribution(
    stream: Stream,
    unembed: torch.Tensor,
    unembed_bias: float,
    own: tuple[float, float],
    shape: Shape,
    described: dict[str, object],
) -> LogitAttribution:
    """The record of a stream carried to the logit: each label's share summed in its place;
    own is (logit, logprob) as the model's own modules computed them. Refuses when the parts
    miss the model's logit (before a soft cap, `described`'s uncapped) by more than 1e-4
    (relative, past a logit of 1)."""
    values = stream.logits(unembed)
    heads = {k: np.zeros(s, dtype=np.float64) for k, s in shape.kinds.items()}
    mlp = np.zeros(shape.layers, dtype=np.float64)
    biases = dict.fromkeys(BIASES, 0.0) | {"unembedding": float(unembed_bias)}
    embeddings = 0.0
    for label, value in zip(stream.labels, values, strict=True):
        if label[0] == "head":
            heads[str(label[1])][int(label[2]), int(label[3])] += value  # type: ignore[call-overload]
        elif label[0] == "mlp":
            mlp[int(label[1])] += value  # type: ignore[call-overload]
        elif label[0] == "bias":
            biases[str(label[1])] += float(value)
        else:
            embeddings += float(value)
    logit, logprob = own
    record = LogitAttribution(
        logit=float(logit), logprob=float(logprob), embeddings=embeddings, heads=heads,
        mlp=mlp, biases=biases, **described,  # type: ignore[arg-type]
    )  # fmt: skip
    want = record.summed
    gap = abs(record.total - want)
    if gap > MATCH * max(1.0, abs(want)):
        raise MismatchError(
            f"the parts of the logit of {record.token!r} sum to {record.total:.6g}, not the "
            f"model's {want:.6g}: the model is not built the way attnlens reads it"
        )
    return record
