"""Fixtures shared by every test folder: a tiny random model saved like a bundled one."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from model import checkpoint
from model.config import TransformerConfig
from model.tokenizer import CharTokenizer
from model.transformer import Transformer

TINY_CHARS = "abcdefgh "


def tiny_transformer(seed: int = 0, N: int = 2, h: int = 2) -> Transformer:
    torch.manual_seed(seed)
    vocab = len(CharTokenizer(TINY_CHARS))
    net = Transformer(TransformerConfig(vocab, vocab, N=N, d_model=16, d_ff=32, h=h, max_len=24))
    return net.eval()


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random, untrained 2-layer model saved as safetensors + config.json."""
    folder = tmp_path_factory.mktemp("tiny")
    meta = {"name": "tiny", "description": "random weights", "max_source_len": 12}
    checkpoint.save(folder, tiny_transformer(), CharTokenizer(TINY_CHARS), meta)
    return folder
