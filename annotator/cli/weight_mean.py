"""Command line: `python -m annotator.cli.weight_mean BASE OTHER --module reader --share 0.5 --out DIR`.

A checkpoint whose module (`reader` or `retriever`) is the weighted mean of two trained copies of it, (1 − share) ×
BASE's + share × OTHER's, everything else BASE's. Two fine-tunings of one model average into one that keeps much of
each (a "model soup", or WiSE-FT for a model and its fine-tuning): the shipped reader is the mean of the AIDA-trained
reader and a round on AIDA plus KB descriptions (docs/decisions.md#reader-weight-mean). The mean is taken in fp32 and
stored in BASE's dtypes and shards.
"""
from __future__ import annotations

import argparse
import json
import logging
import shutil
from collections.abc import Sequence
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

logger = logging.getLogger(__name__)

MODULES = ("reader", "retriever")
INDEX_FILE = "model.safetensors.index.json"
RECORD_FILE = "{module}_weight_mean.json"


def module_weights(folder: Path) -> dict[str, torch.Tensor]:
    """Every tensor of a module folder's safetensors shards."""
    shards = sorted(folder.glob("*.safetensors"))
    if not shards:
        raise FileNotFoundError(f"no safetensors in {folder}")
    weights: dict[str, torch.Tensor] = {}
    for shard in shards:
        weights.update(load_file(shard))
    return weights


def weighted_mean(base: dict[str, torch.Tensor], other: dict[str, torch.Tensor],
                  share: float) -> dict[str, torch.Tensor]:
    """(1 − share) × base + share × other, tensor by tensor, computed in fp32 and kept in base's dtypes.

    Raises:
        ValueError: `share` outside [0, 1], or the two hold different tensor names or shapes.
    """
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must lie in [0, 1], not {share}")
    if base.keys() != other.keys():
        raise ValueError(f"the two modules hold different tensors: {sorted(base.keys() ^ other.keys())[:5]}")
    mismatched = [name for name in base if base[name].shape != other[name].shape]
    if mismatched:
        raise ValueError(f"the two modules' tensors differ in shape: {mismatched[:5]}")
    return {name: ((1.0 - share) * tensor.float() + share * other[name].float()).to(tensor.dtype).contiguous()
            for name, tensor in base.items()}


def write_mean_checkpoint(base: Path, other: Path, *, module: str, share: float, out: Path) -> None:
    """BASE's checkpoint copied to `out`, its `module` folder replaced by the weighted mean (in BASE's shards)."""
    if module not in MODULES:
        raise ValueError(f"module must be one of {', '.join(MODULES)}, not {module!r}")
    if out.exists():
        raise FileExistsError(f"{out} exists: give a new folder")
    mean = weighted_mean(module_weights(base / module), module_weights(other / module), share)
    # Only the top-level module folder is left out (a round's output also holds e.g. `last/reader`).
    shutil.copytree(base, out, ignore=lambda folder, names: [module] if Path(folder) == base else [])
    (out / module).mkdir()
    index = base / module / INDEX_FILE
    shard_of = json.loads(index.read_text(encoding="utf-8"))["weight_map"] if index.is_file() \
        else dict.fromkeys(mean, "model.safetensors")
    for shard in sorted(set(shard_of.values())):
        save_file({name: mean[name] for name, file in shard_of.items() if file == shard}, out / module / shard,
                  metadata={"format": "pt"})
    if index.is_file():
        shutil.copy(index, out / module / INDEX_FILE)
    record = {"base": str(base), "other": str(other), "module": module, "share": share}
    (out / RECORD_FILE.format(module=module)).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m annotator.cli.weight_mean", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base", type=Path, help="checkpoint folder whose everything else is kept")
    parser.add_argument("other", type=Path, help="checkpoint folder (or a round's output) holding the other module")
    parser.add_argument("--module", required=True, choices=MODULES, help="the module averaged")
    parser.add_argument("--share", type=float, default=0.5, help="OTHER's weight in the mean (default: 0.5)")
    parser.add_argument("--out", type=Path, required=True, help="new checkpoint folder")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    write_mean_checkpoint(args.base, args.other, module=args.module, share=args.share, out=args.out)
    logger.info("wrote %s: its %s is %.2f × %s + %.2f × %s", args.out, args.module, 1 - args.share, args.base,
                args.share, args.other)


if __name__ == "__main__":
    main()
