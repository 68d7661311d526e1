"""`annotator.cli.weight_mean`: a checkpoint whose module is the weighted mean of two copies."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from annotator.cli.weight_mean import main, weighted_mean, write_mean_checkpoint

SHARDS = {"a.weight": "model-1.safetensors", "a.bias": "model-1.safetensors", "b.weight": "model-2.safetensors"}


def _checkpoint(folder: Path, fill: float) -> Path:
    tensors = {"a.weight": torch.full((3, 2), fill), "a.bias": torch.full((3,), fill), "b.weight": torch.full((4,), fill)}
    (folder / "reader").mkdir(parents=True)
    for shard in set(SHARDS.values()):
        save_file({n: t.half() for n, t in tensors.items() if SHARDS[n] == shard}, folder / "reader" / shard)
    (folder / "reader" / "model.safetensors.index.json").write_text(json.dumps({"weight_map": SHARDS}))
    (folder / "config.json").write_text(json.dumps({"fill": fill}))
    return folder


def test_the_mean_checkpoint_keeps_the_base_and_its_shards(tmp_path: Path) -> None:
    base, other = _checkpoint(tmp_path / "base", 1.0), _checkpoint(tmp_path / "other", 3.0)

    main([str(base), str(other), "--module", "reader", "--share", "0.25", "--out", str(tmp_path / "mean")])

    out = tmp_path / "mean"
    assert json.loads((out / "config.json").read_text()) == {"fill": 1.0}  # the rest is the base's
    assert sorted(p.name for p in (out / "reader").iterdir()) == sorted(["model.safetensors.index.json",
                                                                         *set(SHARDS.values())])
    for shard in set(SHARDS.values()):
        for name, tensor in load_file(out / "reader" / shard).items():
            assert SHARDS[name] == shard and tensor.dtype == torch.float16
            assert torch.equal(tensor, torch.full_like(tensor, 1.5))  # 0.75 × 1 + 0.25 × 3
    assert json.loads((out / "reader_weight_mean.json").read_text())["share"] == 0.25


def test_the_mean_is_taken_in_fp32() -> None:
    base, other = {"w": torch.tensor([60000.0], dtype=torch.float16)}, {"w": torch.tensor([60000.0], dtype=torch.float16)}
    assert weighted_mean(base, other, 0.5)["w"].item() == 60000.0  # (a + b) in fp16 would be inf


@pytest.mark.parametrize("share", [-0.1, 1.5])
def test_a_share_outside_zero_to_one_is_refused(share: float) -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        weighted_mean({"w": torch.zeros(1)}, {"w": torch.zeros(1)}, share)


def test_modules_of_other_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="different tensors"):
        weighted_mean({"w": torch.zeros(1)}, {"v": torch.zeros(1)}, 0.5)
    with pytest.raises(ValueError, match="shape"):
        weighted_mean({"w": torch.zeros(1)}, {"w": torch.zeros(2)}, 0.5)


def test_an_existing_output_and_an_unknown_module_are_refused(tmp_path: Path) -> None:
    base = _checkpoint(tmp_path / "base", 1.0)
    with pytest.raises(FileExistsError):
        write_mean_checkpoint(base, base, module="reader", share=0.5, out=base)
    with pytest.raises(ValueError, match="reader, retriever"):
        write_mean_checkpoint(base, base, module="encoder", share=0.5, out=tmp_path / "new")
