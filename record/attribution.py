"""Which parts of a decoder wrote one token's logit: direct logit attribution, as plain data.

The residual stream at the position that predicts a token is a sum of what wrote it: the
embeddings, each head (W_O^h o_{h,i}), each attention's output bias, each MLP, each norm's β.
With every norm's mean and scale frozen as the forward pass computed them, each norm is affine,
so the logit W_U[t]·x + b_U[t] splits exactly into one number per part (TransformerLens'
direct logit attribution; in post-norm models such as §3.1's, through every norm after the
part). The parts sum to the logit; a model that soft-caps its logits (Gemma 2: c · tanh(z / c))
has its parts sum to z, the logit before the cap, which the record keeps beside the logit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from attnlens.record.schema import check_schema

SCHEMA = "attnlens.attribution/1"
BIASES = ("attention output", "norms", "unembedding")  # what the biases part is made of
FRAME_COLUMNS = ("part", "kind", "layer", "head", "value")


@dataclass(frozen=True, eq=False)
class LogitAttribution:
    """One token's logit at one decoder position, split into the direct parts that wrote it.

    heads: kind → (L, H) float64, each head's part; mlp: (L,) float64, each decoder layer's
    MLP; biases: BIASES → their summed parts. `logit` is the model's own, computed by its own
    modules; the parts sum to it (`total`; checked to 1e-4 when the record is made)."""

    model: str
    token: str
    position: int  # the decoder position whose next-token logit this is
    logit: float
    logprob: float  # log-softmax of the model's own logits at that position
    embeddings: float
    heads: dict[str, np.ndarray]
    mlp: np.ndarray
    biases: dict[str, float]
    frozen: str  # the norms held fixed, in words ("the final RMSNorm", "every LayerNorm …")
    tokens: tuple[str, ...] = field(default=())  # the decoder positions read, in order
    softcap: float | None = None  # c where the logit is c · tanh(z / c); None: no cap
    uncapped: float | None = None  # z, the logit before the cap (what the parts sum to)

    @property
    def summed(self) -> float:
        """What the parts sum to: the logit, or before a soft cap, z."""
        return self.logit if self.uncapped is None else self.uncapped

    @property
    def total(self) -> float:
        """The sum of every part: `summed` (the logit), to within rounding."""
        heads = sum(float(a.sum()) for a in self.heads.values())
        return self.embeddings + heads + float(self.mlp.sum()) + sum(self.biases.values())

    def to_frame(self) -> pd.DataFrame:
        """One row per part: `part` (embeddings, head, mlp, bias), kind, layer, head, value."""
        rows: list[tuple[Any, ...]] = [("embeddings", "", -1, -1, self.embeddings)]
        for kind, parts in self.heads.items():
            rows += [("head", kind, int(lay), int(hd), float(parts[lay, hd]))
                     for lay, hd in np.ndindex(*parts.shape)]  # fmt: skip
        rows += [("mlp", "", i, -1, float(v)) for i, v in enumerate(self.mlp)]
        rows += [("bias", name, -1, -1, value) for name, value in self.biases.items()]
        return pd.DataFrame(rows, columns=list(FRAME_COLUMNS))

    def to_dict(self) -> dict[str, Any]:
        """The attnlens.attribution/1 JSON object (float64 numbers, exact in JSON)."""
        return {
            "schema": SCHEMA,
            "model": self.model,
            "token": self.token,
            "position": self.position,
            "logit": self.logit,
            "logprob": self.logprob,
            "embeddings": self.embeddings,
            "heads": {kind: parts.tolist() for kind, parts in self.heads.items()},
            "mlp": self.mlp.tolist(),
            "biases": dict(self.biases),
            "frozen": self.frozen,
            "tokens": list(self.tokens),
        } | ({"softcap": self.softcap, "uncapped": self.uncapped} if self.softcap else {})

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LogitAttribution:
        check_schema(data, (SCHEMA,))
        return cls(
            model=str(data["model"]),
            token=str(data["token"]),
            position=int(data["position"]),
            logit=float(data["logit"]),
            logprob=float(data["logprob"]),
            embeddings=float(data["embeddings"]),
            heads={k: np.asarray(v, dtype=np.float64) for k, v in data["heads"].items()},
            mlp=np.asarray(data["mlp"], dtype=np.float64),
            biases={k: float(v) for k, v in data["biases"].items()},
            frozen=str(data["frozen"]),
            tokens=tuple(data.get("tokens", ())),
            softcap=None if data.get("softcap") is None else float(data["softcap"]),
            uncapped=None if data.get("uncapped") is None else float(data["uncapped"]),
        )

    @classmethod
    def from_json(cls, text: str) -> LogitAttribution:
        return cls.from_dict(json.loads(text))
