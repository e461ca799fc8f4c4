"""Tiny random models of ours, built and saved like the bundled ones; nothing is trained."""

from __future__ import annotations

from pathlib import Path

import torch

from attnlens.model.net import checkpoint
from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.decoder_only import DecoderOnlyTransformer
from attnlens.model.net.tokenizer import CharTokenizer
from attnlens.model.net.transformer import Transformer

TINY_CHARS = "abcdefgh "
TINY_LM_CHARS = "abcdefgh ."


def tiny_transformer(seed: int = 0, N: int = 2, h: int = 2) -> Transformer:
    """A random 2-layer encoder-decoder over TINY_CHARS, in eval mode."""
    torch.manual_seed(seed)
    vocab = len(CharTokenizer(TINY_CHARS))
    net = Transformer(TransformerConfig(vocab, vocab, N=N, d_model=16, d_ff=32, h=h, max_len=24))
    return net.eval()


def save_tiny_model(folder: Path) -> Path:
    """A random, untrained 2-layer model saved as safetensors + config.json."""
    meta = {"name": "tiny", "description": "random weights", "max_source_len": 12}
    checkpoint.save(folder, tiny_transformer(), CharTokenizer(TINY_CHARS), meta)
    return folder


def save_tiny_lm(folder: Path) -> Path:
    """A random 2-layer decoder-only model saved like the bundled lm."""
    torch.manual_seed(0)
    tok = CharTokenizer(TINY_LM_CHARS)
    net = DecoderOnlyTransformer(
        TransformerConfig(len(tok), len(tok), N=2, d_model=16, d_ff=32, h=2, max_len=32)
    )
    with torch.no_grad():  # like a trained model: <pad>, <s> and <unk> are never predicted
        net.generator.bias[[tok.pad_id, tok.bos_id, tok.unk_id]] = -1e4
    checkpoint.save(folder, net, tok, {"name": "tiny-lm", "architecture": "decoder"})
    return folder


LONG_LM_POSITIONS = 600  # 2 layers × 4 heads × 600² weights: an 11 MB record, a 106 MB CSV


def save_long_lm(folder: Path) -> Path:
    """A random decoder-only model of ours that reads up to LONG_LM_POSITIONS characters of
    "ab": a large record in milliseconds, without transformers."""
    torch.manual_seed(0)
    tok = CharTokenizer("ab")
    config = TransformerConfig(
        len(tok), len(tok), N=2, d_model=16, d_ff=32, h=4, max_len=LONG_LM_POSITIONS
    )
    checkpoint.save(folder, DecoderOnlyTransformer(config), tok, {"architecture": "decoder"})
    return folder
