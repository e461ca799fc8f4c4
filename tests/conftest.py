"""Fixtures shared by every test folder: a tiny random model saved like a bundled one."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from streamlit.testing.v1 import AppTest

from model import checkpoint
from model.config import TransformerConfig
from model.decoder_only import DecoderOnlyTransformer
from model.lm import LMLens
from model.registry import bundled_models, load
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


@pytest.fixture(scope="session")
def tiny_lm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 2-layer decoder-only model saved like the bundled lm."""
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("lm")
    tok = CharTokenizer("abcdefgh .")
    net = DecoderOnlyTransformer(
        TransformerConfig(len(tok), len(tok), N=2, d_model=16, d_ff=32, h=2, max_len=32)
    )
    with torch.no_grad():  # like a trained model: <pad>, <s> and <unk> are never predicted
        net.generator.bias[[tok.pad_id, tok.bos_id, tok.unk_id]] = -1e4
    checkpoint.save(folder, net, tok, {"name": "tiny-lm", "architecture": "decoder"})
    return folder


@pytest.fixture(scope="session")
def lm(tiny_lm_dir: Path) -> LMLens:
    """The tiny decoder-only model, loaded."""
    lens = load(str(tiny_lm_dir), device="cpu")
    assert isinstance(lens, LMLens)
    return lens


APP_SCRIPT = str(Path(__file__).resolve().parents[1] / "app" / "main.py")


def open_on(model_dir: Path, page: str, **params: str) -> AppTest:
    """A page of the app run once, the session's default model a folder of ours."""
    at = AppTest.from_file(APP_SCRIPT, default_timeout=60)
    at.session_state["default_model"] = str(model_dir)
    at.query_params.update({"page": page, **params})
    return at.run()


def require_bundled(*names: str) -> None:
    """Skip the test unless every named model is bundled (a bare clone has none trained)."""
    missing = set(names) - {entry.name for entry in bundled_models()}
    if missing:
        pytest.skip(f"not bundled yet: {', '.join(sorted(missing))}")


def open_bundled(page: str, model_name: str, timeout: float = 60, **params: str) -> AppTest:
    """A page of the app run once on a bundled model (the test is skipped if it is missing)."""
    require_bundled(model_name)
    at = AppTest.from_file(APP_SCRIPT, default_timeout=timeout)
    at.query_params.update({"page": page, "model": model_name, **params})
    return at.run()
