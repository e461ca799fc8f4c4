"""One output token explained by input erasure (Abnar & Zuidema 2020): how much its
log-probability drops when each input token is replaced, beside the attention that produced it.

The model side (attnlens.analysis.experiments.explanation) measures it; the figures and the
correlation table (attnlens.analysis.agreement) read it. Plain data: numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class ErasureCase:
    """An output token, each input position's erasure importance, and the model's attention.

    Inputs are the K positions the output can draw on: a decoder-only model's sequence up to the
    output position (K = T), an encoder-decoder's source (K = S). Markers (start, end, [CLS])
    are never erased: their erasure is NaN.
    """

    input_tokens: tuple[str, ...]  # (K,)
    output_token: str
    output_position: int  # the decoder position whose next-token prediction is explained
    logprob: float  # log p(output token) with nothing erased
    erasure: np.ndarray  # (K,) log p drop when that input is replaced (> 0: it mattered)
    encoder_self: np.ndarray | None  # (L, H, S, S) encoder-decoders
    decoder_self: np.ndarray | None  # (L, H, T, T)
    cross: np.ndarray | None  # (L, H, T, S) encoder-decoders

    @property
    def seq2seq(self) -> bool:
        """Whether the inputs are an encoder's source (else the decoder's own positions)."""
        return self.cross is not None

    @property
    def erasable(self) -> np.ndarray:
        """(K,) bool: the positions that were erased."""
        mask: np.ndarray = np.isfinite(self.erasure)
        return mask
