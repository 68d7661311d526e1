"""Model inputs: document wordpieces with character offsets, passages, entity and reader sequences."""
from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np
import torch
from torch.nn import functional as F
from transformers import PreTrainedTokenizerBase

from annotator.model.config import LinkerConfig

# EntQA joins two texts with an unused vocabulary entry; where a vocabulary has none we fall back to [SEP].
TOPIC_MARKER = "[unused1]"
TITLE_MARKER = "[unused2]"

# Shape buckets of a GPU's forward passes (`Batch.padded_to_buckets`): there each new (rows, length) shape is thought
# to pay a first use (cuBLAS heuristics, the caching allocator's new block sizes), as documents linked a second time
# took 61.6 ms against 87.9 the first (docs/results/gpu-profile-2026-11-28.md), and nearly every pass had a shape of
# its own. Rows grow to a power of two, at least BUCKET_MIN_ROWS; lengths to a multiple of BUCKET_COLUMNS. Not on
# the CPU: there padding is real compute.
BUCKET_MIN_ROWS = 8
BUCKET_COLUMNS = 16


@dataclass(frozen=True)
class DocumentTokens:
    """A document's wordpieces (no special tokens) and where each one sits in the text."""

    ids: tuple[int, ...]
    offsets: tuple[tuple[int, int], ...]  # (start, end) code-point span of each wordpiece
    topic_ids: tuple[int, ...]  # wordpieces of the document's first word (ψ_topic)
    # Whether each wordpiece begins / ends a word of the tokenizer's pre-tokenization: mentions are whole words,
    # never "Otte" of "Ottey".
    starts_word: tuple[bool, ...]
    ends_word: tuple[bool, ...]


@dataclass(frozen=True)
class Passage:
    """A window of L-2 wordpieces of a document (the [CLS] and [SEP] are added by `InputBuilder`)."""

    index: int  # position of the window in its document
    token_start: int  # document index of its first wordpiece
    ids: tuple[int, ...]
    offsets: tuple[tuple[int, int], ...]
    starts_word: tuple[bool, ...]  # as in `DocumentTokens`, for this window's wordpieces
    ends_word: tuple[bool, ...]

    @property
    def characters(self) -> tuple[int, int]:
        """The (start, end) code-point span of the document that the window covers."""
        return self.offsets[0][0], self.offsets[-1][1]


@dataclass(frozen=True)
class Batch:
    """Padded model inputs."""

    input_ids: torch.Tensor  # (batch, seq_len)
    attention_mask: torch.Tensor  # (batch, seq_len)
    token_type_ids: torch.Tensor | None  # (batch, seq_len); None where the encoder has no segments

    def to(self, device: torch.device | str) -> Batch:
        return Batch(self.input_ids.to(device), self.attention_mask.to(device),
                     None if self.token_type_ids is None else self.token_type_ids.to(device))

    def rows(self, index: np.ndarray) -> Batch:
        """The given rows, cut after the last position any of them attends to."""
        index = torch.as_tensor(index)
        mask = self.attention_mask[index]
        attended = mask.any(0).nonzero()
        width = int(attended.max()) + 1 if len(attended) else 0
        return Batch(self.input_ids[index, :width], mask[:, :width],
                     None if self.token_type_ids is None else self.token_type_ids[index, :width])

    def padded_to_buckets(self, pad_id: int) -> Batch:
        """This batch (of at least one row) grown to its shape bucket (see `BUCKET_MIN_ROWS`), its own rows and
        columns unchanged in the top left corner: the new columns `pad_id`, masked, segment 0; the new rows copies
        of the first (a row all masked can make fused attention give NaN). Callers drop the new rows' outputs;
        masked columns change no output at a real position."""
        rows, columns = self.input_ids.shape
        padded_rows = max(BUCKET_MIN_ROWS, 1 << (rows - 1).bit_length())
        padded_columns = -(-columns // BUCKET_COLUMNS) * BUCKET_COLUMNS
        if (padded_rows, padded_columns) == (rows, columns):
            return self

        def grown(tensor: torch.Tensor, fill: int) -> torch.Tensor:
            wide = F.pad(tensor, (0, padded_columns - columns), value=fill)
            return torch.cat([wide, wide[:1].expand(padded_rows - rows, -1)])

        return Batch(grown(self.input_ids, pad_id), grown(self.attention_mask, 0),
                     None if self.token_type_ids is None else grown(self.token_type_ids, 0))

    def as_kwargs(self) -> dict[str, torch.Tensor]:
        kwargs = {"input_ids": self.input_ids, "attention_mask": self.attention_mask}
        if self.token_type_ids is not None:
            kwargs["token_type_ids"] = self.token_type_ids
        return kwargs


class InputBuilder:
    """Turns text into the token sequences of the retriever and the reader.

    Passage input: `[CLS] passage [unused1] topic [SEP]`; entity input: `[CLS] title [unused2]
    description [SEP]`; reader input: the passage input followed by the entity input without its [CLS].
    Character offsets always come from the fast tokenizer's offset mapping.
    """

    def __init__(self, tokenizer: PreTrainedTokenizerBase, config: LinkerConfig) -> None:
        self.tokenizer = tokenizer
        self.config = config
        self.cls_id: int = tokenizer.cls_token_id
        self.sep_id: int = tokenizer.sep_token_id
        self.pad_id: int = tokenizer.pad_token_id
        self.topic_marker_id = self._marker(TOPIC_MARKER)
        self.title_marker_id = self._marker(TITLE_MARKER)
        self.uses_token_types = "token_type_ids" in tokenizer.model_input_names

    def _marker(self, token: str) -> int:
        token_id = self.tokenizer.convert_tokens_to_ids(token)
        return self.sep_id if token_id in (None, self.tokenizer.unk_token_id) else int(token_id)

    # -- documents and passages -------------------------------------------------------------
    def tokenize_document(self, text: str) -> DocumentTokens:
        """Wordpieces of `text` with their character spans; characters the tokenizer drops get none."""
        encoding = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True,
                                  verbose=False)
        ids = tuple(encoding["input_ids"])
        offsets = tuple((int(s), int(e)) for s, e in encoding["offset_mapping"])
        word_ids = encoding.word_ids()
        topic = tuple(i for i, w in zip(ids, word_ids) if w == word_ids[0])[: self.config.max_topic_len] \
            if ids and self.config.add_topic else ()
        starts_word = tuple(w != before for before, w in zip([None, *word_ids], word_ids))
        ends_word = tuple(w != after for w, after in zip(word_ids, [*word_ids[1:], None]))
        return DocumentTokens(ids, offsets, topic, starts_word, ends_word)

    def split_passages(self, document: DocumentTokens) -> list[Passage]:
        """Overlapping windows of L-2 wordpieces every S wordpieces, the last one reaching the end.

        A document shorter than a window is one passage (an empty document has none).
        """
        width = self.config.passage_len - 2
        n = len(document.ids)
        starts = list(range(0, max(n - width, 0), self.config.stride)) + [max(n - width, 0)] if n else []
        starts = sorted(set(starts))
        return [Passage(i, s, document.ids[s:s + width], document.offsets[s:s + width],
                        document.starts_word[s:s + width], document.ends_word[s:s + width])
                for i, s in enumerate(starts)]

    def passage_input(self, passage: Passage, topic_ids: Sequence[int]) -> list[int]:
        """`[CLS] passage [unused1] topic [SEP]` (the topic part only when there is one).

        A passage shorter than the window (a document of fewer than L-2 wordpieces) is filled up to the
        window with [PAD], which every batch masks, so that the topic and the entity keep the positions they
        had in training: only full windows occur there (every AIDA document is longer), and with them shifted
        the reader marked almost no mention of a short text (docs/decisions.md#short-passage-fill).
        """
        fill = [self.pad_id] * (self.config.passage_len - 2 - len(passage.ids))
        topic = [self.topic_marker_id, *topic_ids] if topic_ids else []
        return [self.cls_id, *passage.ids, *fill, *topic, self.sep_id]

    # -- entities ----------------------------------------------------------------------------
    def entity_inputs(self, titles: Sequence[str], texts: Sequence[str]) -> list[list[int]]:
        """`[CLS] title [unused2] description [SEP]`, at most `max_entity_len` ids each.

        Title-only entities (empty description) are `[CLS] title [SEP]`.
        """
        limit = self.config.max_entity_len
        title_ids = self.tokenizer(list(titles), add_special_tokens=False, truncation=True,
                                   max_length=limit - 2)["input_ids"]
        text_ids = self.tokenizer(list(texts), add_special_tokens=False, truncation=True,
                                  max_length=limit)["input_ids"]
        sequences = []
        for title, text in zip(title_ids, text_ids):
            body = [*title, self.title_marker_id, *text] if text else list(title)
            sequences.append([self.cls_id, *body[: limit - 2], self.sep_id])
        return sequences

    # -- reader --------------------------------------------------------------------------------
    def reader_batch(self, passage_inputs: Sequence[Sequence[int]], pair_passages: np.ndarray,
                     entity_ids: np.ndarray, entity_lengths: np.ndarray) -> Batch:
        """`[CLS] passage ⊕ topic [SEP] title ⊕ description [SEP]` of every (passage, entity) pair, padded.

        Passage wordpiece j sits at position j + 1 of its row; position 0 is [CLS]. Built by array indexing,
        not pair by pair: one request reads thousands of pairs.

        Args:
            passage_inputs: `passage_input` sequences.
            pair_passages: (pairs,) the passage of each pair, an index into `passage_inputs`.
            entity_ids: (pairs, width) entity inputs (`entity_inputs`, [CLS] first), right-padded with anything.
            entity_lengths: (pairs,) their lengths.
        """
        passages, passage_lengths = right_padded(passage_inputs, self.pad_id)
        pair_passages = np.asarray(pair_passages, dtype=np.int64)
        first = passage_lengths[pair_passages][:, None]  # where each pair's entity part begins
        lengths = first[:, 0] + np.asarray(entity_lengths, dtype=np.int64) - 1  # the entity's [CLS] is dropped
        positions = np.arange(lengths.max(initial=1))[None, :]
        in_passage = positions < first
        from_passage = passages[pair_passages[:, None], np.minimum(positions, passages.shape[1] - 1)]
        entity_ids = np.asarray(entity_ids, dtype=np.int64)
        from_entity = np.take_along_axis(entity_ids, np.clip(positions - first + 1, 0, entity_ids.shape[1] - 1), 1)
        input_ids = np.where(in_passage, from_passage,
                             np.where(positions < lengths[:, None], from_entity, self.pad_id))
        mask = input_ids != self.pad_id  # also masks a short passage's fill (`passage_input`)
        token_types = torch.from_numpy((mask & ~in_passage).astype(np.int64)) if self.uses_token_types else None
        return Batch(torch.from_numpy(input_ids), torch.from_numpy(mask.astype(np.int64)), token_types)

    def padded_batch(self, ids: np.ndarray, lengths: np.ndarray) -> Batch:
        """A batch of id rows already right-padded with anything (an index's entity_ids.npy) and their lengths."""
        width = int(lengths.max())
        input_ids = torch.from_numpy(np.array(ids[:, :width], dtype=np.int64))
        beyond = torch.arange(width).unsqueeze(0) >= torch.from_numpy(lengths.astype(np.int64)).unsqueeze(1)
        input_ids[beyond] = self.pad_id
        attention_mask = input_ids != self.pad_id  # also masks a short passage's fill (`passage_input`)
        token_types = torch.zeros_like(input_ids) if self.uses_token_types else None
        return Batch(input_ids, attention_mask.long(), token_types)

    def pad(self, sequences: Sequence[Sequence[int]]) -> Batch:
        """Right-pad to the longest sequence (segment 0 throughout)."""
        return self.padded_batch(*right_padded(sequences, self.pad_id))


def right_padded(sequences: Sequence[Sequence[int]], fill: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, longest) int64 array of the sequences right-padded with `fill`, and their lengths.

    Filled through one mask, not row by row: a GPU request pads thousands of sequences.
    """
    lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
    mask = np.arange(lengths.max(initial=0)) < lengths[:, None]
    array = np.full(mask.shape, fill, dtype=np.int64)
    array[mask] = np.fromiter(itertools.chain.from_iterable(sequences), dtype=np.int64, count=lengths.sum())
    return array, lengths


T = TypeVar("T")


class HasPassages(Protocol):
    """A document cut into passages (the linker's `Document`, training's `TrainingDocument`)."""

    @property
    def passages(self) -> Sequence[object]: ...


def per_document(values: Iterable[T], documents: Sequence[HasPassages]) -> list[list[T]]:
    """Values given for all documents' passages in turn, as one list per document."""
    remaining: Iterator[T] = iter(values)
    return [[next(remaining) for _ in document.passages] for document in documents]
