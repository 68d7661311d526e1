"""Which device and precision the model computes in: CUDA in bf16 (or fp16) where present; on the CPU, the reader
and the KB encoding in the precision `RuntimeSettings.cpu_precision` resolves to, chosen from a table."""
from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar

import torch

from annotator.entity_index import EntityEncoder
from annotator.model.reader import Reader
from annotator.model.retriever import DualEncoder
from annotator.model.tokenization import InputBuilder
from annotator.runtime.hardware import cpu_precision
from annotator.runtime.onnx_int8 import OnnxInt8EntityEncoder, OnnxInt8Reader
from annotator.runtime.settings import CpuPrecision

ModelT = TypeVar("ModelT", bound=torch.nn.Module)
Int8T = TypeVar("Int8T")


def inference_device(device: str | torch.device | None = None) -> tuple[torch.device, torch.dtype]:
    """The device to run on (CUDA when present) and its dtype: bf16 or fp16 on CUDA, fp32 on the CPU."""
    device = torch.device(device if device is not None else "cuda" if torch.cuda.is_available() else "cpu")
    if device.type != "cuda":
        return device, torch.float32
    return device, torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def cpu_reader(reader: Reader, builder: InputBuilder, precision: CpuPrecision) -> Reader | OnnxInt8Reader:
    """The reader the linker runs: on the CPU, in `precision` (int8: its ONNX Runtime export)."""
    return _in_cpu_precision(reader, next(reader.parameters()).device, precision,
                             lambda: OnnxInt8Reader(reader, builder))


def kb_encoder(retriever: DualEncoder, builder: InputBuilder, precision: CpuPrecision) -> EntityEncoder:
    """What encodes a KB: on the CPU, the entity tower in `precision` (int8: under ONNX Runtime)."""
    return _in_cpu_precision(retriever, retriever.device, precision,
                             lambda: OnnxInt8EntityEncoder(retriever, builder))


# A model on the CPU in each precision `cpu_precision` resolves to, given the model and its int8 export's maker.
# bf16 is a copy, like the int8 export, so that the model stays as it is (the linker's passage tower, which may
# share the word embeddings with the entity tower, stays fp32).
_ON_CPU: dict[str, Callable[[Any, Callable[[], Any]], Any]] = {
    "int8": lambda model, int8: int8(),
    "bf16": lambda model, int8: copy.deepcopy(model).to(torch.bfloat16),
    "fp32": lambda model, int8: model,
}


def _in_cpu_precision(model: ModelT, device: torch.device, precision: CpuPrecision,
                      int8: Callable[[], Int8T]) -> ModelT | Int8T:
    """`model` off the CPU; on it, `model` in `precision` as it resolves (see `_ON_CPU`)."""
    if device.type != "cpu":
        return model
    return _ON_CPU[cpu_precision(precision)](model, int8)
