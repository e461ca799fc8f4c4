"""Training by the paper's recipe (§5): Adam(0.9, 0.98, 1e-9), warm-up schedule, label smoothing."""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from tqdm import tqdm

from model import checkpoint
from model.batch import make_batch
from model.config import TransformerConfig
from model.device import pick_device
from model.evaluate import evaluate
from model.tasks.base import Task
from model.transformer import Transformer


@dataclass(frozen=True)
class TrainConfig:
    """How long and how to train; the defaults are sized for 2 CPU cores."""

    steps: int = 4000
    batch_size: int = 128
    warmup: int = 400  # §5.3 warmup_steps
    lr_factor: float = 1.0  # multiplies the §5.3 learning rate
    label_smoothing: float = 0.1  # §5.4 ε_ls
    seed: int = 0
    eval_every: int = 500
    eval_examples: int = 500
    snapshots: int = 6  # log-spaced checkpoints kept from along training


def learning_rate(step: int, d_model: int, warmup: int, factor: float = 1.0) -> float:
    """§5.3: lrate = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)."""
    step = max(step, 1)
    return float(factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5))


def snapshot_steps(steps: int, count: int) -> list[int]:
    """count distinct steps, log-spaced from 1% of training to its end."""
    if count <= 0:
        return []
    first = max(1, steps // 100)
    picks = {round(first * (steps / first) ** (i / max(count - 1, 1))) for i in range(count)}
    return sorted(picks)


def paper_optimizer(
    net: nn.Module, d_model: int, config: TrainConfig
) -> tuple[torch.optim.Adam, torch.optim.lr_scheduler.LambdaLR]:
    """§5.3: Adam with β1 = 0.9, β2 = 0.98, ε = 1e-9, and the warm-up learning rate per step."""
    optimizer = torch.optim.Adam(net.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: learning_rate(s + 1, d_model, config.warmup, config.lr_factor)
    )
    return optimizer, schedule


def train(
    task: Task,
    model_config: TransformerConfig,
    config: TrainConfig,
    out: Path,
    device: str = "auto",
    progress: bool = True,
) -> dict[str, Any]:
    """Train a model on task, save it to out, and return its held-out metrics."""
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    dev = pick_device(device)
    tok = task.tokenizer
    net = Transformer(model_config).to(dev)
    optimizer, schedule = paper_optimizer(net, model_config.d_model, config)
    held_out = task.examples(config.eval_examples, seed=10_000 + config.seed)
    keep = set(snapshot_steps(config.steps, config.snapshots))
    history: list[dict[str, float]] = []
    shown: dict[str, float] = {}
    bar = tqdm(range(1, config.steps + 1), desc=f"train {task.name}", disable=not progress)
    for step in bar:
        examples = [task.sample(rng) for _ in range(config.batch_size)]
        batch = make_batch(tok, [e.source for e in examples], [e.target for e in examples], dev)
        logprobs = net(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)  # (B, T, V)
        loss = F.cross_entropy(
            logprobs.transpose(1, 2),
            batch.tgt_out,
            ignore_index=tok.pad_id,
            label_smoothing=config.label_smoothing,
        )
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        record = {"step": float(step), "loss": float(loss.detach())}
        if step % config.eval_every == 0 or step == config.steps:
            result = evaluate(net, tok, held_out)
            record |= {"exact": result.exact, "aligned": result.best_alignment}
        history.append(record)
        shown |= {k: v for k, v in record.items() if k != "step"}
        bar.set_postfix({k: f"{v:.3f}" for k, v in shown.items()}, refresh=False)
        if step in keep:
            checkpoint.save(
                out / "snapshots" / f"step-{step:06d}", net, tok, {"step": step}, half=True
            )
    final = evaluate(net, tok, held_out)
    metrics = {
        "held_out_examples": final.n,
        "exact": final.exact,
        "best_head": list(final.best_head),
        "best_head_alignment": final.best_alignment,
        "head_alignment": final.head_alignment.round(4).tolist(),
        "final_loss": history[-1]["loss"] if history else math.nan,
    }
    meta = {
        "name": task.name,
        "task": task.name,
        "description": task.description,
        "architecture": "encoder-decoder",
        "max_source_len": task.max_source_len,
        "training": asdict(config),
        "metrics": metrics,
        "loss_curve": [h["loss"] for h in history[:: max(1, len(history) // 200)]],
    }
    checkpoint.save(out, net, tok, meta)
    return metrics
