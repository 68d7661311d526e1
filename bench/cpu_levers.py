"""Bench (issue 78): the name test and the cheaper readings against the full path, in one process, interleaved
document by document (demo KB; AIDA-A first 12 and 4 of each of ace2004, spotlight, oke2016-train). Ad hoc:
docs/results/cpu-speed-2026-12-07.md. Run from the worktree root: python -m bench.cpu_levers"""
import dataclasses, time, sys
import numpy as np
from annotator import Linker
from annotator.model.tokenization import InputBuilder
from annotator.pipeline.reading import BatchedReading, CutEntities
from gerbil.datasets import load_dataset
fast = Linker.from_pretrained("models/entqa-minilm", config_overrides={"name_test": True})
full = dataclasses.replace(fast, reading=dataclasses.replace(fast.reading, name_test=None))
b24 = InputBuilder(fast.builder.tokenizer, fast.config.replace(stride=24))
combo = dataclasses.replace(fast, builder=b24, reading=dataclasses.replace(fast.reading, builder=b24,
                            index=CutEntities(fast.reading.index, 40, b24.sep_id)))
pairs = [0]
orig = BatchedReading._score_pairs
def counting(self, batch, width):
    pairs[0] += int(batch.input_ids.shape[0]); return orig(self, batch, width)
BatchedReading._score_pairs = counting
texts = []
for name, n in (("aida/dev.ttl", 12), ("ood-dev/ace2004.ttl", 4), ("ood-dev/spotlight.ttl", 4), ("ood-dev/oke2016-train.ttl", 4)):
    texts += [d.text for d in load_dataset("s", "../shared/data/" + name).documents[:n]]
sides = {"name+stride24+ent40": combo, "name": fast, "full": full}
for l in sides.values(): l.link(texts[0])
t = {k: 0.0 for k in sides}; p = {k: 0 for k in sides}
for text in texts:
    for k, l in sides.items():
        pairs[0] = 0; s = time.perf_counter(); l.link(text); t[k] += time.perf_counter() - s; p[k] += pairs[0]
for k in sides:
    print(f"{k:22} {len(texts)} docs {len(texts)/t[k]:.3f} docs/s ratio {t['full']/t[k]:.2f} pairs {p[k]}", flush=True)
