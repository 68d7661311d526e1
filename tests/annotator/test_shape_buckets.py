"""A GPU's forward passes padded to a few shapes (`Batch.padded_to_buckets`), scoring as the unpadded ones."""
from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable
from typing import Generic, TypeVar

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from annotator.model.reader import span_positions_only
from annotator.model.retriever import DualEncoder
from annotator.model.tokenization import Batch
from annotator.pipeline.document import Document
from annotator.pipeline.linker import Linker

from tests.annotator.test_pipeline import TEXT
from tests.annotator.test_tokenization import TRICKY
from tests.support.tiny_reader import POSITIONS, random_pairs, tiny_reader

PAD = 0
T = TypeVar("T")


def _is_bucket(shape: tuple[int, ...]) -> bool:
    rows, columns = shape
    return rows >= 8 and rows & (rows - 1) == 0 and columns % 16 == 0


@settings(deadline=None, max_examples=200)
@given(st.data())
def test_a_batch_grows_to_its_bucket_keeping_its_own_rows_and_columns(data: st.DataObject) -> None:
    columns = data.draw(st.integers(1, 70), label="columns")
    lengths = data.draw(st.lists(st.integers(1, columns), min_size=1, max_size=70), label="lengths")
    rows = len(lengths)
    mask = (torch.arange(columns)[None, :] < torch.tensor(lengths)[:, None]).long()
    ids = torch.randint(1, 100, (rows, columns), generator=torch.Generator().manual_seed(rows * columns)) * mask
    segments = (torch.arange(columns)[None, :] >= 2).long() * mask if data.draw(st.booleans(), label="segments") \
        else None
    batch = Batch(ids, mask, segments)

    padded = batch.padded_to_buckets(PAD)

    padded_rows, padded_columns = padded.input_ids.shape
    assert _is_bucket((padded_rows, padded_columns))
    assert (padded_rows == 8 or padded_rows < 2 * rows) and padded_columns < columns + 16  # the smallest bucket
    tensors = [(padded.input_ids, ids, PAD), (padded.attention_mask, mask, 0)]
    assert (padded.token_type_ids is None) == (segments is None)
    if segments is not None:
        tensors.append((padded.token_type_ids, segments, 0))
    for grown, own, fill in tensors:
        assert grown.shape == (padded_rows, padded_columns) and grown.dtype == own.dtype
        assert torch.equal(grown[:rows, :columns], own)
        assert (grown[:, columns:] == fill).all()  # new columns: [PAD], masked, segment 0
        assert torch.equal(grown[rows:], grown[:1].expand(padded_rows - rows, -1))  # new rows: the first again
    assert (padded.attention_mask.sum(1) > 0).all()  # no row all masked


def test_a_batch_already_in_its_bucket_is_returned_as_it_is() -> None:
    batch = random_pairs([16] * 8)
    assert batch.padded_to_buckets(PAD) is batch


@pytest.mark.parametrize("attention", ["eager", "sdpa"])
@pytest.mark.parametrize("leading", [False, True], ids=["full", "span-positions-only"])
def test_the_reader_scores_a_bucketed_batch_as_the_batch_itself(attention: str, leading: bool) -> None:
    reader = tiny_reader(attention)
    reader = span_positions_only(reader, POSITIONS) if leading else reader
    batch = random_pairs([12, 7, 3])
    rows, columns = batch.input_ids.shape
    with torch.inference_mode():
        expected, got = reader(batch), reader(batch.padded_to_buckets(PAD))
    width = expected.start.shape[1]
    for own, bucketed in ((expected.start, got.start), (expected.end, got.end)):
        torch.testing.assert_close(bucketed[:rows, :width], own, rtol=0, atol=1e-5)
    torch.testing.assert_close(got.rerank[:rows], expected.rerank, rtol=0, atol=1e-5)


def test_the_passage_tower_embeds_a_bucketed_batch_as_the_batch_itself() -> None:
    retriever = DualEncoder(tiny_reader("sdpa").encoder).eval()
    batch = random_pairs([12, 7, 3, 9, 12])
    with torch.inference_mode():
        expected, got = retriever.embed_passages(batch), retriever.embed_passages(batch.padded_to_buckets(PAD))
    torch.testing.assert_close(got[:len(expected)], expected, rtol=0, atol=1e-5)


@dataclasses.dataclass
class _ShapeSpy(Generic[T]):
    """`forward`, recording the (rows, length) of each batch it is given."""

    forward: Callable[[Batch], T]
    shapes: list[tuple[int, ...]] = dataclasses.field(default_factory=list)

    def __call__(self, batch: Batch) -> T:
        self.shapes.append(tuple(batch.input_ids.shape))
        return self.forward(batch)


@pytest.fixture()
def gpu(monkeypatch: pytest.MonkeyPatch) -> torch.device:
    """A CUDA device whose passes run on this CPU (a batch stays where it is)."""
    monkeypatch.setattr(Batch, "to", lambda batch, device: batch)
    return torch.device("cuda")


@pytest.fixture()
def documents(tiny_linker: Linker) -> list[Document]:
    return [Document.tokenized(text, None, tiny_linker.builder) for text in (TEXT, TRICKY)]


def test_reading_pads_its_passes_to_buckets_on_a_gpu_only(tiny_linker: Linker, documents: list[Document],
                                                         gpu: torch.device) -> None:
    candidates = tiny_linker.retrieval.candidates(documents)
    reading = dataclasses.replace(tiny_linker.reading, batch_size=10)  # passes of 10 pairs, then fewer: rows padded
    on_cpu, on_gpu = _ShapeSpy(reading.reader), _ShapeSpy(reading.reader)
    expected = dataclasses.replace(reading, reader=on_cpu).scores(documents, candidates)
    got = dataclasses.replace(reading, reader=on_gpu, device=gpu).scores(documents, candidates)
    assert not all(map(_is_bucket, on_cpu.shapes))  # the CPU pays for no padding
    assert len(on_gpu.shapes) == len(on_cpu.shapes) > 1 and all(map(_is_bucket, on_gpu.shapes))
    for document_expected, document_got in zip(expected, got, strict=True):
        for own, bucketed in zip(document_expected, document_got, strict=True):
            assert np.array_equal(bucketed.rows, own.rows)
            for name in ("start", "end", "rerank"):  # -inf beyond each pass's length in both
                np.testing.assert_allclose(getattr(bucketed, name), getattr(own, name), rtol=0, atol=1e-5)


def test_retrieval_pads_its_passes_to_buckets_on_a_gpu_only(tiny_linker: Linker, documents: list[Document],
                                                           gpu: torch.device) -> None:
    retrieval = dataclasses.replace(tiny_linker.retrieval, batch_size=4)  # two passes: each drops its padded rows
    on_cpu, on_gpu = (_ShapeSpy(retrieval.retriever.embed_passages) for _ in range(2))
    expected = dataclasses.replace(retrieval, retriever=types.SimpleNamespace(embed_passages=on_cpu)) \
        .candidates(documents)
    got = dataclasses.replace(retrieval, retriever=types.SimpleNamespace(embed_passages=on_gpu), device=gpu) \
        .candidates(documents)
    assert not all(map(_is_bucket, on_cpu.shapes))  # the CPU pays for no padding
    assert len(on_gpu.shapes) == len(on_cpu.shapes) > 1 and all(map(_is_bucket, on_gpu.shapes))
    for document_expected, document_got in zip(expected, got, strict=True):
        for own, bucketed in zip(document_expected, document_got, strict=True):
            assert np.array_equal(bucketed, own)
