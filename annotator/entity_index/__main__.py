"""Command line: encode a KB with a checkpoint's entity tower and write its entity index folder."""
from __future__ import annotations

import argparse
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path

from annotator.model.checkpoint import load_checkpoint_tokenizer, load_config, load_retriever
from annotator.entity_index import INDEX_FACTORIES, EntityIndex
from annotator.entity_index import cached_index_dir, entity_tower_id
from annotator.runtime.precision import inference_device, kb_encoder
from annotator.model.tokenization import InputBuilder
from annotator.runtime.settings import RuntimeSettings
from annotator.settings import settings_from_variables


def build_index(model_dir: str | Path, kb_path: str | Path, out: str | Path | None = None, *,
                runtime: RuntimeSettings | None = None, batch_size: int | None = None, limit: int | None = None,
                device: str | None = None) -> EntityIndex:
    """Build (or resume building) the entity index of `kb_path` for the checkpoint in `model_dir`.

    `out` defaults to the cache folder where `Linker.from_pretrained` looks for this KB's index. The host's
    `runtime` settings give the index type, the encoding's CPU precision and, unless `batch_size` is given, the
    batch (`gpu_batch_size` on a GPU).
    """
    config = load_config(model_dir)
    runtime = runtime or RuntimeSettings()
    torch_device, dtype = inference_device(device)
    if out is None and limit is not None:
        raise ValueError("a partial index (limit) needs an explicit output folder")
    retriever = load_retriever(model_dir, config)
    # Identity and cache folder come from the stored weights, before the GPU's bf16 cast changes them.
    checkpoint_id = entity_tower_id(retriever)
    out = out if out is not None else cached_index_dir(kb_path=kb_path, entity_tower_id=checkpoint_id,
                                                         config=config)
    retriever = retriever.to(torch_device, dtype)
    builder = InputBuilder(load_checkpoint_tokenizer(model_dir), config)
    return EntityIndex.build(out, kb_path=kb_path, encoder=kb_encoder(retriever, builder, runtime.cpu_precision),
                             builder=builder, checkpoint_id=checkpoint_id, index_type=runtime.index_type,
                             batch_size=batch_size or runtime.batch_sizes(torch_device.type)[1], limit=limit)


def main(argv: Sequence[str] | None = None, *, prog: str = "python -m annotator.entity_index") -> int:
    """Builds the index the command line asks for; `prog` names the command in help (`entqa index` runs this).

    The host's settings come from the ENTQA_* variables, as the service reads them (ENTQA_CPU_PRECISION, ...)."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--model", required=True, help="checkpoint folder (config.json, tokenizer/, retriever/)")
    parser.add_argument("--kb", required=True, help="KB file: shared, BLINK or KILT JSON lines (.jsonl[.gz])")
    parser.add_argument("--out", help="index folder to write (an unfinished build resumes); default: the cache "
                                      "folder the linker reads for this model and KB ($ENTQA_CACHE/indexes/...)")
    parser.add_argument("--index-type", choices=sorted(INDEX_FACTORIES), help="default: $ENTQA_INDEX_TYPE, else flat")
    parser.add_argument("--batch-size", type=int, help="entities per forward pass")
    parser.add_argument("--limit", type=int, help="index only the first N entities")
    parser.add_argument("--device", help="cpu, cuda, cuda:1 (default: CUDA when present)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    started = time.perf_counter()
    runtime = settings_from_variables(os.environ).runtime
    runtime = runtime.replace(index_type=args.index_type) if args.index_type else runtime
    index = build_index(args.model, args.kb, args.out, runtime=runtime, batch_size=args.batch_size,
                        limit=args.limit, device=args.device)
    print(f"indexed {len(index)} entities into {index.directory} in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
