"""A test's guard that no entity is encoded: what a linker that finds its KB's index already built must not do."""
from __future__ import annotations

import pytest

from annotator.model.retriever import DualEncoder
from annotator.runtime.onnx_int8 import OnnxInt8EntityEncoder


def forbid_entity_encoding(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails the test at the first entity encoded by the entity tower, in any CPU precision: the retriever
    (fp32, or its bf16 copy) or its int8 export under ONNX Runtime, the encoders an index build is given."""
    def encoded(self: object, batch: object) -> None:
        pytest.fail(f"entities encoded by {type(self).__name__}: the KB's index was built again")

    for encoder in (DualEncoder, OnnxInt8EntityEncoder):
        monkeypatch.setattr(encoder, "embed_entities", encoded)
