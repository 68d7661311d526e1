"""The learned decision: one gradient-boosted model that scores each (span, candidate) pair, and the rule that turns
its scores into links. Stored as a checkpoint's `decision/` folder: LightGBM's text model and a manifest that names
its features, thresholds and what it was trained on; a decision whose features or reader do not match is refused."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lightgbm
import numpy as np

from annotator.decision.features import FEATURE_GROUPS, FEATURES, SpanCandidates
from annotator.errors import ModelLoadError
from annotator.knowledge.tables import FORMAT_VERSION as KNOWLEDGE_FORMAT
from annotator.pipeline.merging import LinkedSpan, drop_overlaps

FORMAT_VERSION = 1
FOLDER = Path("decision")
MODEL = "model.txt"
MANIFEST = "manifest.json"


def reader_identity(model_dir: str | Path) -> str:
    """sha256 over the checkpoint's reader weight files: what the decision's reader scores came from."""
    digest = hashlib.sha256()
    for path in sorted((Path(model_dir) / "reader").glob("*.safetensors")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class DecisionSettings:
    """How the decision is applied, chosen when it is trained and stored with it.

    Attributes:
        given_threshold: a given span (D2KB) takes its likeliest candidate when the model gives it more than this,
            else it is NIL.
        found_threshold: a found span (A2KB) is kept when its likeliest candidate scores more than this.
        decoding_threshold: the bar at which decoding proposes spans for the model to decide on (below γ).
    """

    given_threshold: float
    found_threshold: float
    decoding_threshold: float
    without: tuple[str, ...] = ()  # feature groups left out (an ablation): read as 0


@dataclass(frozen=True, eq=False)
class Decision:
    """A trained decision: `links` turns a document's span candidates into its links."""

    booster: lightgbm.Booster
    settings: DecisionSettings
    trained_on: Mapping[str, Any]  # reader identity, data and counts, for the manifest and the model card

    def probabilities(self, span: SpanCandidates) -> np.ndarray:
        """The model's probability that each candidate is the span's entity."""
        if not len(span.rows):
            return np.zeros(0)
        features = span.features
        if self.settings.without:
            features = features.copy()
            features[:, [FEATURES.index(name) for group in self.settings.without
                         for name in FEATURE_GROUPS[group]]] = 0
        return self.booster.predict(features, num_threads=1)

    def links(self, spans: Sequence[SpanCandidates], *, given: bool) -> list[LinkedSpan]:
        """Given spans: one link each, its likeliest candidate, NIL (score 0) at or below the given threshold.
        Found spans: each span's likeliest candidate above the found threshold, overlaps resolved by probability."""
        chosen = []
        for span in spans:
            p = self.probabilities(span)
            best = int(np.argmax(p)) if len(p) else -1
            entity, score = (int(span.rows[best]), float(p[best])) if best >= 0 else (-1, 0.0)
            bar = self.settings.given_threshold if given else self.settings.found_threshold
            if score > bar:
                chosen.append(LinkedSpan(span.start, span.end, entity, score))
            elif given:
                chosen.append(LinkedSpan(span.start, span.end, entity, 0.0))
        if given:
            return chosen
        return sorted(drop_overlaps(chosen), key=lambda s: (s.start, s.end))

    def save(self, model_dir: str | Path) -> Path:
        directory = Path(model_dir) / FOLDER
        directory.mkdir(parents=True, exist_ok=True)
        self.booster.save_model(str(directory / MODEL))
        manifest = {"format": FORMAT_VERSION, "features": list(FEATURES), "knowledge_format": KNOWLEDGE_FORMAT,
                    "settings": self.settings.__dict__, "trained_on": dict(self.trained_on)}
        (directory / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        return directory

    @classmethod
    def load(cls, model_dir: str | Path, *, reader_id: str) -> Decision:
        """The checkpoint's decision.

        Raises:
            ModelLoadError: no decision, or one made for other features, knowledge tables or another reader.
        """
        directory = Path(model_dir) / FOLDER
        if not (directory / MANIFEST).is_file() or not (directory / MODEL).is_file():
            raise ModelLoadError(f"the learned decision is on but {directory} holds none (train one with "
                                 f"python -m annotator.decision.training, or set decision to false)")
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        problems = []
        if manifest.get("format") != FORMAT_VERSION:
            problems.append(f"format {manifest.get('format')}, this code reads {FORMAT_VERSION}")
        if manifest.get("features") != list(FEATURES):
            problems.append("other features than this code computes")
        if manifest.get("knowledge_format") != KNOWLEDGE_FORMAT:
            problems.append(f"knowledge tables of format {manifest.get('knowledge_format')}, this code builds "
                            f"{KNOWLEDGE_FORMAT}")
        if manifest.get("trained_on", {}).get("reader") != reader_id:
            problems.append("another reader's scores (the reader was replaced after the decision was trained)")
        if problems:
            raise ModelLoadError(f"the decision in {directory} does not match this checkpoint: {'; '.join(problems)}; "
                                 f"train it again with python -m annotator.decision.training")
        settings = manifest["settings"]
        settings["without"] = tuple(settings.get("without", ()))
        return cls(lightgbm.Booster(model_file=str(directory / MODEL)), DecisionSettings(**settings),
                   manifest["trained_on"])
