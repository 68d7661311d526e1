"""torch's dynamic int8 quantization, and how a model computes.

Dynamic int8 quantizes weights per output channel and activations per batch, at run time. On a CPU with
VNNI this is about 1.5× faster than fp32 (docs/decisions.md#cpu-int8-onnx). The linker's int8 path is ONNX Runtime
(`annotator.runtime.onnx_int8`, faster again, same note); this copy stays as the reference the int8 bench compares with.
"""
from __future__ import annotations

import copy
import warnings

import torch
from torch import nn
from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic


def int8_copy(model: nn.Module) -> nn.Module:
    """A copy of an fp32 CPU `model` whose Linear layers compute in int8 (the original is untouched)."""
    with warnings.catch_warnings():
        # torch.ao's eager quantization is deprecated in favour of torchao, which is not installed here.
        warnings.simplefilter("ignore")
        return quantize_dynamic(copy.deepcopy(model), {nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8)


def precision(model: nn.Module) -> str:
    """How `model` computes: "int8" when its Linear layers are dynamically quantized, else its float dtype."""
    if any(isinstance(m, torch.ao.nn.quantized.dynamic.Linear) for m in model.modules()):
        return "int8"
    return str(next(model.parameters()).dtype).removeprefix("torch.")
