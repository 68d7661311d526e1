"""Checkpoint folders: config JSON, tokenizer, encoder architecture and sharded safetensors weights.

Layout of a checkpoint folder::

    config.json          LinkerConfig (the model's settings; the host's are RuntimeSettings, never saved here)
    encoder/config.json  architecture of the base encoder (weights come from the shards below)
    tokenizer/           the fast tokenizer
    retriever/           DualEncoder weights (model*.safetensors, sharded with an index file)
    reader/              Reader weights
    mentions.tsv         the mention table (`annotator.pipeline.mention_table`), where the config asks for one
"""
from __future__ import annotations

import logging
import shutil
from pathlib import Path

import torch
from huggingface_hub import load_torch_model, save_torch_state_dict
from transformers import AutoConfig, PreTrainedTokenizerBase
from transformers import PreTrainedModel

from annotator.model.config import LinkerConfig
from annotator.model.encoders import encoder_from_config, load_pretrained_encoder, load_tokenizer, resolve_encoder
from annotator.errors import ModelLoadError
from annotator.model.reader import Reader
from annotator.model.retriever import DualEncoder

logger = logging.getLogger(__name__)

MAX_SHARD_SIZE = "16MB"  # files that fit through every transfer limit we have
MENTION_TABLE = Path("mentions.tsv")


def save_checkpoint(directory: str | Path, *, config: LinkerConfig, tokenizer: PreTrainedTokenizerBase,
                    retriever: DualEncoder | None = None, reader: Reader | None = None,
                    dtype: torch.dtype = torch.float16) -> Path:
    """Write the given modules (fp16 by default) with the config, tokenizer and encoder architecture."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    config.to_file(directory / "config.json")
    tokenizer.save_pretrained(str(directory / "tokenizer"))
    some_module = retriever.passage_encoder if retriever is not None else reader.encoder if reader else None
    if some_module is not None:
        some_module.config.save_pretrained(str(directory / "encoder"))
    for name, module in (("retriever", retriever), ("reader", reader)):
        if module is None:
            continue
        aliases = tensor_aliases(module)
        state = {k: v.detach().to("cpu", dtype) if v.is_floating_point() else v.detach().cpu()
                 for k, v in module.state_dict().items() if k not in aliases}
        (directory / name).mkdir(exist_ok=True)
        save_torch_state_dict(state, directory / name, max_shard_size=MAX_SHARD_SIZE)
    logger.info("saved checkpoint to %s", directory)
    return directory


def keep_mention_table(source: str | Path, target: str | Path) -> None:
    """A checkpoint saved from another keeps its mention table: the table comes from the training links and the
    KB, not from the weights, and the config the new checkpoint inherits may ask for it."""
    if (Path(source) / MENTION_TABLE).is_file():
        shutil.copyfile(Path(source) / MENTION_TABLE, Path(target) / MENTION_TABLE)


def load_config(directory: str | Path) -> LinkerConfig:
    path = Path(directory) / "config.json"
    if not path.is_file():
        raise ModelLoadError(f"{directory} is not a checkpoint folder: expected {path}")
    return LinkerConfig.from_file(path)


def load_checkpoint_tokenizer(directory: str | Path) -> PreTrainedTokenizerBase:
    return load_tokenizer(Path(directory) / "tokenizer")


def has_module(directory: str | Path, name: str) -> bool:
    return any((Path(directory) / name).glob("*.safetensors"))


def _encoder(directory: Path) -> PreTrainedModel:
    return encoder_from_config(AutoConfig.from_pretrained(str(directory / "encoder")))


def tensor_aliases(module: torch.nn.Module) -> set[str]:
    """State-dict names of tensors that an earlier name already holds (tied weights): stored once."""
    seen: set[int] = set()
    aliases = set()
    for name, tensor in module.state_dict(keep_vars=True).items():
        if id(tensor) in seen:
            aliases.add(name)
        seen.add(id(tensor))
    return aliases


def _load_weights(module: torch.nn.Module, directory: Path) -> None:
    if not has_module(directory.parent, directory.name):
        raise ModelLoadError(f"no safetensors weights in {directory}")
    result = load_torch_model(module, directory, strict=False)  # tied weights are stored under one name
    missing = set(result.missing_keys) - tensor_aliases(module)
    if missing or result.unexpected_keys:
        raise ModelLoadError(f"weights in {directory} do not fit the model: missing {sorted(missing)[:5]}, "
                             f"unexpected {sorted(result.unexpected_keys)[:5]}")


def load_retriever(directory: str | Path, config: LinkerConfig) -> DualEncoder:
    """The trained DualEncoder of a checkpoint (fp32, on the CPU)."""
    directory = Path(directory)
    retriever = DualEncoder(_encoder(directory), None if config.shared_towers else _encoder(directory),
                            normalize=config.normalize, shared_embeddings=config.shared_embeddings)
    _load_weights(retriever, directory / "retriever")
    return retriever.float().eval()


def load_reader(directory: str | Path) -> Reader:
    """The trained Reader of a checkpoint (fp32, on the CPU)."""
    directory = Path(directory)
    reader = Reader(_encoder(directory))
    _load_weights(reader, directory / "reader")
    return reader.float().eval()


def new_retriever(config: LinkerConfig) -> DualEncoder:
    """A DualEncoder initialised from the pretrained base encoder named in `config`."""
    path = resolve_encoder(config.encoder)
    entity_encoder = None if config.shared_towers else load_pretrained_encoder(path)
    return DualEncoder(load_pretrained_encoder(path), entity_encoder, normalize=config.normalize,
                       shared_embeddings=config.shared_embeddings)


def new_reader(config: LinkerConfig) -> Reader:
    """A Reader whose encoder starts from the pretrained base encoder (heads random)."""
    return Reader(load_pretrained_encoder(resolve_encoder(config.encoder)))
