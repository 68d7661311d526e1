"""EntQA entity linking: passages → retriever → reader → decoding → merging, behind `Linker`."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from annotator.data_types import Entity, Mention
from annotator.linking import EntityLinker

# The trained checkpoint shipped with the project (with its demo KB and that KB's index): inside the package where
# a wheel installed it (pyproject.toml maps models/ to annotator/checkpoints), else in models/ beside the package, as in
# a source checkout or an editable install.
_INSTALLED_MODEL_DIR = Path(__file__).resolve().parent / "checkpoints" / "entqa-minilm"
DEFAULT_MODEL_DIR = (_INSTALLED_MODEL_DIR if _INSTALLED_MODEL_DIR.is_dir()
                     else Path(__file__).resolve().parent.parent / "models" / "entqa-minilm")

__all__ = ["DEFAULT_MODEL_DIR", "Entity", "EntityLinker", "Linker", "LinkerConfig", "Mention"]


def __getattr__(name: str) -> Any:
    # torch, transformers and faiss load only when the model is asked for, so that the web layer
    # and the evaluation can use the types without them.
    if name == "Linker":
        from annotator.pipeline.linker import Linker
        return Linker
    if name == "LinkerConfig":
        from annotator.model.config import LinkerConfig
        return LinkerConfig
    raise AttributeError(f"module 'annotator' has no attribute {name!r}")
