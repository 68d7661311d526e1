"""What both trainers share: settings, seeding, batched encoding, and the optimisation loop with resume."""
from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm
from transformers import get_linear_schedule_with_warmup

from annotator.runtime.hardware import multiplies_bf16
from annotator.model.tokenization import Batch, InputBuilder

logger = logging.getLogger(__name__)

BatchT = TypeVar("BatchT")
LAST = "last"  # sub-folder of --out with the latest full-precision weights and the optimiser state
STATE_FILE = "training_state.pt"
TRAINING_CONFIG_FILE = "training_config.json"
METRICS_FILE = "metrics.jsonl"


@dataclass
class TrainingConfig:
    """Settings common to both modules (each module's config adds its own).

    Attributes:
        epochs: passes over the (possibly cut) training passages.
        batch_size: passages per optimisation micro-batch.
        grad_accumulation: micro-batches per optimiser step.
        lr: peak AdamW learning rate.
        weight_decay: AdamW weight decay (not applied to biases and LayerNorm weights).
        warmup: share of the optimiser steps with a linear warm-up; linear decay to 0 after it.
        max_grad_norm: gradient clipping norm.
        max_passages: train on a random subset of this many passages (None: all).
        kb_passages: passages with a gold cut from random KB descriptions (`description_passages`) added to the
            training corpus's; 0: none. With AIDA train's 11,899 passages with a gold, 1,300-2,100 make 10-15 %
            of the mix (39 % lost 1.3 F1 on AIDA-A: docs/decisions.md#kb-description-passages).
        max_steps: stop after this many optimiser steps (None: run all epochs).
        dev_docs: evaluate on the first this many dev documents (None: all).
        eval_kb_size: random KB entities added to the dev golds for the evaluation index.
        max_entity_len: wordpieces of an entity input (overrides the linker config; CPU: 64).
        threads: torch intra-op threads.
        seed: seeds Python, numpy and torch; also picks the subsets.
        save_steps: also save the resumable state every this many optimiser steps.
        encode_batch_size: texts per forward pass when encoding without gradients.
        cpu_precision: how the CPU computes forward passes: "bf16" (autocast; the weights and the optimiser
            stay fp32), "fp32", or "auto" = bf16 where the CPU multiplies bf16 (AVX-512 bf16 or AMX), else fp32.
            A GPU always uses bf16.
    """

    epochs: int = 1
    batch_size: int = 32
    grad_accumulation: int = 1
    lr: float = 2e-5
    weight_decay: float = 0.01
    warmup: float = 0.06
    max_grad_norm: float = 1.0
    max_passages: int | None = None
    kb_passages: int = 0
    max_steps: int | None = None
    dev_docs: int | None = None
    eval_kb_size: int = 20_000
    max_entity_len: int = 64
    threads: int = 2
    seed: int = 13
    save_steps: int = 200
    encode_batch_size: int = 128
    cpu_precision: str = "auto"

    def __post_init__(self) -> None:
        if self.cpu_precision not in ("auto", "bf16", "fp32"):
            raise ValueError(f"cpu_precision must be auto, bf16 or fp32 for training, not {self.cpu_precision!r}")
        if self.kb_passages < 0:
            raise ValueError(f"kb_passages counts passages: 0 (none) or more, not {self.kb_passages}")

    @property
    def cpu_bf16(self) -> bool:
        """Whether forward passes on the CPU run under bf16 autocast."""
        return self.cpu_precision == "bf16" or (self.cpu_precision == "auto" and multiplies_bf16())

    def to_file(self, path: str | Path, **extra: Any) -> None:
        """Writes the settings (and `extra` keys, e.g. the command line) as JSON."""
        Path(path).write_text(json.dumps({**dataclasses.asdict(self), **extra}, indent=2) + "\n", encoding="utf-8")


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def autocast(device: torch.device, *, cpu_bf16: bool = False) -> contextlib.AbstractContextManager:
    """bf16 autocast on CUDA; on the CPU only when asked (bf16 matmuls are slower than fp32 on CPUs without bf16
    instructions)."""
    if device.type == "cuda" or cpu_bf16:
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


@torch.no_grad()
def encode(embed: Callable[[Batch], torch.Tensor], builder: InputBuilder, sequences: Sequence[Sequence[int]], *,
           batch_size: int, device: torch.device, desc: str) -> torch.Tensor:
    """Vectors of many token sequences, batched by length so that little padding is computed.

    Args:
        embed: `DualEncoder.embed_passages` or `embed_entities`.
        builder: pads the batches.
        sequences: token id sequences with their special tokens.
        batch_size: sequences per forward pass.
        device: where to run.
        desc: progress bar label.

    Returns:
        (len(sequences), d) float32 vectors on the CPU, in input order.
    """
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    chunks = []
    for begin in tqdm(range(0, len(order), batch_size), desc=desc, leave=False, mininterval=5):
        batch = builder.pad([sequences[i] for i in order[begin:begin + batch_size]]).to(device)
        with autocast(device):
            chunks.append(embed(batch).float().cpu())
    vectors = torch.cat(chunks) if chunks else torch.zeros(0, 0)
    result = torch.empty_like(vectors)
    result[torch.as_tensor(order)] = vectors
    return result


def top_k(queries: torch.Tensor, keys: torch.Tensor, k: int, *, chunk: int | None = None) -> torch.Tensor:
    """(queries, min(k, keys)) indices of the highest inner products, best first (exact, chunked matmul).

    `chunk` queries are scored at a time; by default as many as keep the score block near 1 GB of fp32.
    """
    k = min(k, keys.shape[0])
    chunk = chunk or max(1, 2**28 // max(keys.shape[0], 1))
    return torch.cat([(queries[i:i + chunk] @ keys.T).topk(k, dim=1).indices
                      for i in range(0, queries.shape[0], chunk)]) if len(queries) else torch.zeros(0, k, dtype=torch.long)


def make_optimizer(model: nn.Module, config: TrainingConfig,
                   total_steps: int) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LambdaLR]:
    """AdamW (no decay on biases and LayerNorm) with a linear warm-up then linear decay."""
    decay, no_decay = [], []
    for parameter in model.parameters():
        if parameter.requires_grad:
            (no_decay if parameter.ndim < 2 else decay).append(parameter)
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=config.lr)
    scheduler = get_linear_schedule_with_warmup(optimizer, math.ceil(config.warmup * total_steps), total_steps)
    return optimizer, scheduler


@dataclass
class LoopHooks(Generic[BatchT]):
    """The module-specific parts of a training run.

    Attributes:
        batches: the micro-batches of an epoch (deterministic given the epoch, so a resumed run skips
            exactly the ones already seen).
        loss: the loss of one micro-batch.
        before_epoch: work at the start of an epoch (e.g. mining hard negatives); gets the epoch.
        evaluate: dev metrics after an epoch; must contain "score" (higher is better).
        save: writes the model into a folder with the given float dtype.
    """

    batches: Callable[[int], Sequence[BatchT]]
    loss: Callable[[BatchT], torch.Tensor]
    before_epoch: Callable[[int], None]
    evaluate: Callable[[int], dict[str, float]]
    save: Callable[[Path, torch.dtype], None]


def run_training(model: nn.Module, hooks: LoopHooks, config: TrainingConfig, *, out: Path, device: torch.device,
                 resume: bool) -> dict[str, float]:
    """Optimises `model`, evaluating after each epoch and keeping the best-dev weights in `out`.

    `out/last/` holds the latest fp32 weights and `training_state.pt` (optimiser, scheduler, position,
    best score, RNG), written every `save_steps` optimiser steps and after each epoch; `resume=True`
    continues from it. `out/metrics.jsonl` gets one line per evaluation.

    Returns:
        The best dev metrics.
    """
    steps_per_epoch = math.ceil(len(hooks.batches(0)) / config.grad_accumulation)
    total = steps_per_epoch * config.epochs
    if config.max_steps is not None:
        total = min(total, config.max_steps)
    optimizer, scheduler = make_optimizer(model, config, total)
    step, epoch, skip, best = 0, 0, 0, {"score": -math.inf}
    state_path = out / LAST / STATE_FILE
    if resume and state_path.is_file():
        state = torch.load(state_path, weights_only=False)
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        step, epoch, skip, best = state["step"], state["epoch"], state["micro_batch"], state["best"]
        random.setstate(state["python_rng"])
        torch.set_rng_state(state["torch_rng"])
        logger.info("resumed at epoch %d, micro-batch %d, step %d", epoch, skip, step)

    def save_last(next_epoch: int, micro_batch: int) -> None:
        hooks.save(out / LAST, torch.float32)
        torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "step": step,
                    "epoch": next_epoch, "micro_batch": micro_batch, "best": best,
                    "python_rng": random.getstate(), "torch_rng": torch.get_rng_state()}, state_path)

    while epoch < config.epochs and step < total:
        hooks.before_epoch(epoch)  # also when resuming mid-epoch: mined negatives are not saved
        model.train()
        batches = hooks.batches(epoch)
        progress = tqdm(range(skip, len(batches)), desc=f"epoch {epoch + 1}/{config.epochs}", mininterval=10)
        running = 0.0
        for i in progress:
            with autocast(device, cpu_bf16=config.cpu_bf16):
                loss = hooks.loss(batches[i])
            (loss / config.grad_accumulation).backward()
            running = 0.9 * running + 0.1 * loss.item() if i > skip else loss.item()
            if (i + 1) % config.grad_accumulation and i + 1 < len(batches):
                continue
            nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            progress.set_postfix(loss=f"{running:.3f}", lr=f"{scheduler.get_last_lr()[0]:.2e}", step=step)
            if step >= total:
                break
            if step % config.save_steps == 0:
                save_last(epoch, i + 1)
        skip = 0
        epoch += 1
        model.eval()
        metrics = {"epoch": epoch, "step": step, "train_loss": running, **hooks.evaluate(epoch)}
        logger.info("dev after epoch %d: %s", epoch, json.dumps(metrics))
        with open(out / METRICS_FILE, "a", encoding="utf-8") as f:
            f.write(json.dumps(metrics) + "\n")
        if metrics["score"] > best["score"]:
            best = metrics
            hooks.save(out, torch.float16)
            logger.info("new best dev score %.4f: saved to %s", metrics["score"], out)
        save_last(epoch, 0)
    return best


def shuffled_batches(items: Sequence[BatchT], size: int, *, seed: int) -> list[Sequence[BatchT]]:
    """`items` shuffled by `seed` (the same order again on resume) and cut into batches of `size`."""
    order = list(items)
    random.Random(seed).shuffle(order)
    return list(chunks(order, size))


def chunks(items: Sequence[BatchT], size: int) -> Iterator[Sequence[BatchT]]:
    """Consecutive slices of `size` items (the last may be shorter)."""
    for begin in range(0, len(items), size):
        yield items[begin:begin + size]
