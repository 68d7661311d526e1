"""What this machine's CPU computes fast, and so which precision "auto" means on it."""
from __future__ import annotations

import torch


def cpu_precision(requested: str) -> str:
    """What a `RuntimeSettings.cpu_precision` resolves to: "auto" is bf16 where the CPU has AMX tiles (bf16
    matrix products in hardware: about 1.5× the reader's int8 throughput, docs/decisions.md#bf16-only-with-amx),
    else int8."""
    if requested != "auto":
        return requested
    # torch exposes the AMX check only privately. With AVX-512 bf16 alone, bf16 inference is slower than
    # ONNX Runtime's int8 (docs/decisions.md#bf16-only-with-amx).
    return "bf16" if torch.cpu._is_amx_tile_supported() else "int8"


def multiplies_bf16() -> bool:
    """Whether this CPU multiplies bf16 in hardware (AVX-512 bf16 or AMX); elsewhere torch emulates bf16
    products, slower than fp32 ones."""
    return torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()
