"""Replay GERBIL A2KB/D2KB experiments locally: datasets, annotator clients, matching and scores."""
from __future__ import annotations

from gerbil.client import Answer, Annotator, HttpAnnotator, InProcessAnnotator, Task, reduce_document
from gerbil.datasets import Dataset, load_dataset, load_nif, load_redirects
from gerbil.experiment import ExperimentResult, document_markings, evaluate, linker_scores, run_experiment
from gerbil.matching import Marking, count_matches, meaning_match, strong_span_match, weak_span_match
from gerbil.scores import Counts, Prf, Scores, score_documents
from gerbil.uris import KB_PREFIXES, UriExpander, is_in_kb, same_as_closure

__all__ = ["KB_PREFIXES", "Annotator", "Answer", "Counts", "Dataset", "ExperimentResult", "HttpAnnotator",
           "InProcessAnnotator", "Marking", "Prf", "Scores", "Task", "UriExpander", "count_matches",
           "document_markings", "evaluate", "is_in_kb", "linker_scores", "load_dataset", "load_nif", "load_redirects",
           "meaning_match", "reduce_document", "run_experiment", "same_as_closure", "score_documents",
           "strong_span_match", "weak_span_match"]
