"""Which fused attention kernels the encoders run on: every one of PyTorch's but cuDNN's."""
from __future__ import annotations

from contextlib import AbstractContextManager

from torch.nn.attention import SDPBackend, sdpa_kernel

# cuDNN's attention (PyTorch's first choice for a masked pass on an H100/H200) plans every (pairs, length) shape it
# has not seen, and nearly every request brings new ones: on one H200 a document took 240 ms through HTTP, 22 ms of
# it GPU kernels (docs/decisions.md#gpu-request-profile). These backends serve any shape without planning.
ATTENTION_BACKENDS: list[SDPBackend] = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]


def attention_kernels() -> AbstractContextManager[None]:
    """The scope of an encoder's forward pass: `scaled_dot_product_attention` chooses among `ATTENTION_BACKENDS`."""
    return sdpa_kernel(ATTENTION_BACKENDS)
