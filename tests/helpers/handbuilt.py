"""Models whose heads are set by hand, so an experiment's answer on them is known exactly."""

from __future__ import annotations

import math
from pathlib import Path

import torch

from attnlens.model.net import checkpoint
from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.decoder_only import DecoderOnlyTransformer
from attnlens.model.net.tokenizer import CharTokenizer
from attnlens.model.net.transformer import Transformer
from attnlens.model.training.tasks import get_task
from helpers.tiny import TINY_LM_CHARS

D_MODEL, H = 16, 2
D_K = D_MODEL // H
SCALE = 400.0  # query length: the previous position wins the softmax by e^(~60) or more
PREVIOUS, SILENT = (0, 0), [(0, 1), (1, 1)]  # (layer, head)


def _one_step_back(d: int) -> torch.Tensor:
    """(d, d): maps the first d sinusoidal dimensions of position p to those of p - 1 (each
    (sin ωp, cos ωp) pair rotated by -ω)."""
    m = torch.zeros(d, d)
    for i in range(d // 2):
        w = 1.0 / 10000 ** (2 * i / D_MODEL)
        c, s = math.cos(w), math.sin(w)
        # sin(ω(p-1)) = sin ωp·c - cos ωp·s ; cos(ω(p-1)) = cos ωp·c + sin ωp·s
        m[2 * i, 2 * i], m[2 * i, 2 * i + 1] = c, -s
        m[2 * i + 1, 2 * i], m[2 * i + 1, 2 * i + 1] = s, c
    return m


def previous_token_lm(folder: Path) -> Path:
    """A 2-layer decoder-only model over TINY_LM_CHARS: layer 0 head 0 attends exactly to the
    previous position (its query is the position one back, its key the position itself, on
    sinusoidal dimensions no token embedding touches); heads 0.1 and 1.1 write nothing (their
    columns of W_O are zero), so ablating them changes nothing."""
    torch.manual_seed(0)
    tok = CharTokenizer(TINY_LM_CHARS)
    net = DecoderOnlyTransformer(
        TransformerConfig(
            len(tok), len(tok), N=2, d_model=D_MODEL, d_ff=32, h=H, dropout=0.0, max_len=48
        )
    )
    with torch.no_grad():
        net.tgt_embed.lut.weight[:, :D_K] = 0.0  # tokens live outside head 0's dimensions
        attn = net.layers[0].self_attn
        for w in (attn.w_q, attn.w_k):
            w.weight[:D_K] = 0.0
            w.bias[:D_K] = 0.0
        attn.w_q.weight[:D_K, :D_K] = SCALE * _one_step_back(D_K)
        attn.w_k.weight[:D_K, :D_K] = torch.eye(D_K)
        for layer, head in SILENT:
            net.layers[layer].self_attn.w_o.weight[:, head * D_K : (head + 1) * D_K] = 0.0
        net.generator.bias[[tok.pad_id, tok.bos_id, tok.unk_id]] = -1e4
    meta = {"name": "hand-lm", "architecture": "decoder", "description": "heads set by hand"}
    checkpoint.save(folder, net.eval(), tok, meta)
    return folder


def silent_head_task_model(folder: Path, task: str = "reverse") -> Path:
    """An untrained 2-layer encoder-decoder saved as a model of `task`, whose cross head 1.1
    and encoder head 0.1 write nothing (zero W_O columns)."""
    torch.manual_seed(1)
    tok = get_task(task).tokenizer
    net = Transformer(
        TransformerConfig(len(tok), len(tok), N=2, d_model=D_MODEL, d_ff=32, h=H, max_len=40)
    )
    with torch.no_grad():
        net.decoder_layers()[1].src_attn.w_o.weight[:, D_K:] = 0.0
        net.encoder[0].self_attn.w_o.weight[:, D_K:] = 0.0
    checkpoint.save(folder, net.eval(), tok, {"name": f"hand-{task}", "task": task})
    return folder
