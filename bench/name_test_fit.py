"""Fit the name test's stand-in rerank logit on AIDA train (never on the dev sets): the reader reads every pair of
the first documents, and the stand-in is the log-mean-exp of the rerank logits of the pairs the test fails, so that a
passage's softmax keeps about its denominator. Also prints how many pairs the test passes and how many of the pairs
the reader ranks above γ it fails (what the test may cost).

    python -m bench.name_test_fit --kb ../shared/data/kb/entities.jsonl.gz --train ../shared/data/aida/train.ttl \\
        --docs 40
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from annotator import DEFAULT_MODEL_DIR
from annotator.pipeline.decoding import PassageLogits, decode_passages, softmax
from annotator.pipeline.document import Document


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL_DIR)
    parser.add_argument("--kb", type=Path, required=True)
    parser.add_argument("--train", type=Path, default=Path("../shared/data/aida/train.ttl"))
    parser.add_argument("--docs", type=int, default=40)
    parser.add_argument("--show", action="store_true", help="print the labelled spans of pairs the test fails")
    args = parser.parse_args(argv)

    from annotator import Linker
    from gerbil.datasets import load_dataset

    linker = Linker.from_pretrained(args.model, kb_path=args.kb, config_overrides={"name_test": True})
    test = linker.reading.name_test
    full = linker.reading.__class__(builder=linker.reading.builder, reader=linker.reading.reader,
                                    index=linker.reading.index, device=linker.reading.device,
                                    batch_size=linker.reading.batch_size)
    texts = [d.text for d in load_dataset("train", str(args.train)).documents[:args.docs]]
    failed, passed, high_failed, high, linked, lost = [], 0, 0, 0, 0, 0
    for text in texts:
        view = linker.text_view.view(text)
        document = Document.tokenized(view.text, None, linker.builder)
        if not document.passages:
            continue
        candidates = linker.retrieval.candidates([document])[0]
        scores = full.scores([document], [candidates])[0]
        for keep, s in zip(test.readable(document, candidates), scores):
            failed.extend(s.rerank[~keep].tolist())
            passed += int(keep.sum())
            p = softmax(s.rerank.astype(np.float64))
            high += int((p > linker.decoding.threshold).sum())
            high_failed += int(((p > linker.decoding.threshold) & ~keep).sum())
        labelled = decode_passages([PassageLogits(s.start, s.end, s.rerank, q.starts_word, q.ends_word)
                                    for q, s in zip(document.passages, scores)], top_spans=linker.config.top_spans,
                                   max_span_len=linker.config.max_span_len, threshold=linker.decoding.threshold)
        keeps = test.readable(document, candidates)
        for span in labelled:
            linked += 1
            if not keeps[span.passage][span.candidate]:
                lost += 1
                if args.show:
                    q = document.passages[span.passage]
                    print("  fails:", linker.index.titles[scores[span.passage].rows[span.candidate]], "|",
                          document.text[q.offsets[span.start][0]:q.offsets[span.end][1]], f"{span.score:.2f}")
    failed_logits = np.array(failed)
    stand_in = float(np.log(np.mean(np.exp(failed_logits)))) if len(failed_logits) else 0.0
    print(f"{len(texts)} documents: {passed + len(failed_logits)} pairs, {passed} pass the name test "
          f"({passed / max(1, passed + len(failed_logits)):.1%}); of the {high} pairs with p_rerank > γ, "
          f"{high_failed} fail it; of the {linked} spans decoding labels, {lost} are of pairs that fail it")
    print(f"failed pairs' rerank logits: mean {failed_logits.mean():.3f}, median {np.median(failed_logits):.3f}, "
          f"log-mean-exp {stand_in:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
