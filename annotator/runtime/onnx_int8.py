"""The CPU's int8 path: the entity tower and the reader exported to ONNX, run in int8 by ONNX Runtime.

ONNX Runtime's dynamic quantization makes every weight MatMul int8 (per output channel; activations
scaled per batch). The reader's graph is fused first, so that its attention is one quantized node per
layer. Measured on this project's 2-core CPU (docs/decisions.md#cpu-int8-onnx) against torch's dynamic int8 copy
(`int8_copy`): KB encoding about 1.2× faster and the reader about 2.7× faster, both closer to fp32; fusion
gains the reader about 15 % more (same note). Exporting and quantizing take seconds: once per process for the
reader, once per index build for the entity tower.
"""
from __future__ import annotations

import copy
import functools
import logging
import os
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn
from transformers import PreTrainedModel

from annotator.model.reader import Reader, ReaderLogits
from annotator.model.retriever import DualEncoder
from annotator.model.tokenization import Batch, InputBuilder

PRECISION = "onnxruntime int8"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class _Positional(nn.Module):
    # ONNX export traces positional tensors; this maps them back onto a Batch and the outputs onto a tuple.
    def __init__(self, model: nn.Module, kind: str) -> None:
        super().__init__()
        self.model = model
        self.kind = kind  # "entities": a retriever's pooled entity vectors; "reader": the reader's logits

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                token_type_ids: torch.Tensor | None = None) -> torch.Tensor | tuple[torch.Tensor, ...]:
        batch = Batch(input_ids, attention_mask, token_type_ids)
        if self.kind == "entities":
            return self.model.embed_entities(batch)
        logits = self.model(batch)
        return logits.start, logits.end, logits.rerank


class _Int8Session:
    """An int8 ONNX Runtime session of `_Positional(model)`, fed from a Batch."""

    def __init__(self, model: nn.Module, builder: InputBuilder, *, kind: str, outputs: Sequence[str],
                 per_token: Sequence[str], threads: int | None, fuse: bool = False) -> None:
        """`fuse`: fuse the graph of the transformer inside `model` (attention, layer norms, GELU) first."""
        import onnx
        import onnxruntime
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from onnxruntime.transformers import optimizer
        from onnxruntime.transformers.fusion_options import AttentionMaskFormat, FusionOptions

        # The TorchScript exporter leaves the module it traced computing differently: trace a copy.
        model = copy.deepcopy(model).float().cpu().eval()
        if fuse:  # ONNX Runtime's fusion recognises eager attention, not the SDPA kernel's graph
            transformer = next(m for m in model.modules() if isinstance(m, PreTrainedModel))
            transformer.set_attn_implementation("eager")
        traced = _Positional(model, kind)
        example = builder.pad([[builder.cls_id, builder.sep_id], [builder.cls_id, builder.cls_id, builder.sep_id]])
        inputs = {name: tensor for name, tensor in zip(_INPUTS, (example.input_ids, example.attention_mask,
                                                                  example.token_type_ids)) if tensor is not None}
        axes = {**{name: {0: "batch", 1: "length"} for name in (*inputs, *per_token)},
                **{name: {0: "batch"} for name in outputs if name not in per_token}}
        self.names = tuple(inputs)
        self.outputs = list(outputs)
        with tempfile.TemporaryDirectory() as folder:
            fp32, int8 = Path(folder) / "model.onnx", Path(folder) / "model.int8.onnx"
            with warnings.catch_warnings(), torch.inference_mode():
                warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation and tracer notes
                torch.onnx.export(traced, tuple(inputs.values()), str(fp32), input_names=list(inputs),
                                  output_names=self.outputs, dynamic_axes=axes, opset_version=17, dynamo=False)
            # The optimizer and the quantizer log every node on the root logger; a service log needs none of it.
            logging.disable(logging.WARNING)
            try:
                if fuse:
                    # The whole 2-D mask, not BERT fusion's default of one length per row: that one attends
                    # to the first sum(mask) positions, which is wrong for a short passage's masked fill
                    # (`InputBuilder.passage_input`). Measured no slower (docs/decisions.md#short-passage-fill).
                    options = FusionOptions("bert")
                    options.attention_mask_format = AttentionMaskFormat.AttentionMask
                    fused = optimizer.optimize_model(str(fp32), model_type="bert",
                                                     num_heads=transformer.config.num_attention_heads,
                                                     hidden_size=transformer.config.hidden_size,
                                                     optimization_options=options)
                    fused.save_model_to_file(str(fp32))
                # DefaultTensorType: shape inference leaves some MatMul outputs untyped; they are all fp32.
                quantize_dynamic(fp32, int8, per_channel=True, weight_type=QuantType.QInt8,
                                 extra_options={"DefaultTensorType": 1})
            finally:
                logging.disable(logging.NOTSET)
            self.operators = frozenset(node.op_type for node in onnx.load(str(int8)).graph.node)
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = threads or torch.get_num_threads() or os.cpu_count() or 1
            options.inter_op_num_threads = 1
            # Idle workers sleep at once instead of spinning: between passes the caller's own work (and
            # torch's threads) needs the cores; within a pass spinning gained nothing (docs/decisions.md#no-thread-spinning).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self.session = onnxruntime.InferenceSession(str(int8), options, providers=["CPUExecutionProvider"])

    def run(self, batch: Batch) -> list[torch.Tensor]:
        feed = {name: tensor.cpu().numpy() for name, tensor in batch.as_kwargs().items() if name in self.names}
        return [torch.from_numpy(np.asarray(array)) for array in self.session.run(self.outputs, feed)]


class OnnxInt8EntityEncoder:
    """A retriever's `embed_entities` in int8 under ONNX Runtime (an `EntityEncoder` for index builds)."""

    precision = PRECISION
    device = torch.device("cpu")

    def __init__(self, retriever: DualEncoder, builder: InputBuilder, *, threads: int | None = None) -> None:
        self.dim = retriever.dim
        self._retriever, self._builder, self._threads = retriever, builder, threads

    @functools.cached_property
    def _session(self) -> _Int8Session:
        # Built on first use: loading a finished index must not pay for an export.
        retriever = self._retriever
        entity_only = DualEncoder(retriever.entity_tower, normalize=retriever.normalize)
        return _Int8Session(entity_only, self._builder, kind="entities", outputs=["vectors"], per_token=[],
                            threads=self._threads)

    def embed_entities(self, batch: Batch) -> torch.Tensor:
        """(batch, d) entity vectors in fp32."""
        return self._session.run(batch)[0]


class OnnxInt8Reader:
    """A reader in int8 under ONNX Runtime: called on a Batch like `Reader`, returning its `ReaderLogits`."""

    precision = PRECISION

    def __init__(self, reader: Reader, builder: InputBuilder, *, threads: int | None = None) -> None:
        # Only the reader is fused: the entity tower stays as the KB vectors whose recall was measured
        # were encoded.
        self._session = _Int8Session(reader, builder, kind="reader", outputs=["start", "end", "rerank"],
                                     per_token=["start", "end"], threads=threads, fuse=True)

    @property
    def operators(self) -> frozenset[str]:
        """ONNX operator types of the int8 graph it runs."""
        return self._session.operators

    def __call__(self, batch: Batch) -> ReaderLogits:
        return ReaderLogits(*self._session.run(batch))
