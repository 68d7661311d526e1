"""The model's settings, saved with its weights as config.json: one frozen dataclass whose defaults are the shipped
checkpoint's, with the paper's setup as a named preset."""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from annotator.errors import ConfigError
from annotator.runtime.settings import RuntimeSettings


@dataclass(frozen=True)
class LinkerConfig:
    """EntQA settings that change the answers (defaults: the shipped models/entqa-minilm; `paper()`: the paper's).

    Attributes:
        encoder: base encoder: "all-MiniLM-L6-v2", "all-mpnet-base-v2" or a local Hugging Face folder.
        passage_len: L, wordpieces per passage including [CLS] and [SEP].
        stride: S, wordpieces between the starts of consecutive passages.
        add_topic: append the document's first word (ψ_topic) to every passage.
        max_topic_len: at most this many wordpieces of the topic word.
        max_entity_len: wordpieces of title ⊕ description, [CLS]/[SEP] included (paper: 128).
        top_k: K, candidates retrieved per passage (paper: 100).
        top_spans: P, spans kept per candidate (paper: 3).
        max_span_len: longest mention in wordpieces (original server: 10).
        threshold: γ, keep a labelled span when p_rerank × p_span > γ (paper: 0.05); a given span (D2KB)
            whose best entity does not score above γ is answered NIL.
        normalize: unit-length retriever vectors (mean-pooled), so the inner product is a cosine.
        shared_towers: one encoder for passages and entities (halves the checkpoint).
        shared_embeddings: with separate towers, the passage tower reads the entity tower's word
            embeddings (stored once: a third of MiniLM's weights).
        document_candidates: after decoding, read each passage also against the entities linked elsewhere
            in its document whose title shares a capitalised word with the passage outside every mention
            ("Bailey" after "Donovan Bailey"), and add the mentions found outside the first pass's; given
            spans (D2KB) are disambiguated again, with the words inside them. Not in the paper; +0.8 A2KB and
            +1.9 D2KB dev F1 for the shipped checkpoint (docs/decisions.md#document-candidates).
        short_names: then link a capitalised run left open (end to end) or a given span answered NIL (D2KB)
            that is the first or last words of exactly one multi-word mention the document linked, to its
            entity ("Cunningham" after "Randall Cunningham"; `annotator.pipeline.short_names`), or an acronym of
            its words ("NLD" after "National League for Democracy"), and, after the other name stages, move such a
            link that the reader gave another bearer of the name ("Henke" as *Tom Henke* after "Nolan Henke"), or
            that is the surname of a person named in full ("Jordan" after "Neil Jordan").
            Not in the paper; +0.9 A2KB and +1.1 D2KB dev F1 for the shipped checkpoint
            (docs/decisions.md#short-names), +0.3 / +0.5 for the other bearers (docs/decisions.md#other-bearers)
            and +0.2 / +0.2 for the acronyms.
        mention_candidates: add to each passage's retrieved candidates, for every capitalised name in it, up to this
            many entities the training links gave that name most often (`annotator.pipeline.mention_table`, the
            checkpoint's `mentions.tsv`); the reader decides as for the others. 0 = off (the paper retrieves only);
            +0.4 A2KB and +0.6 D2KB dev F1 for the shipped checkpoint at 3 (docs/decisions.md#mention-table).
        title_candidates: add to the candidates of a span given to disambiguate (D2KB) up to this many KB entries
            whose title is the span's text, ignoring case and a trailing qualifier (*Taurus (astrology)*); the
            reader decides as for the others (`annotator.pipeline.title_matches`). 0 = off (the paper retrieves
            only). Not in the paper (docs/decisions.md#title-matches).
        title_only_look: last, read again with a blank description each candidate whose rerank logit is positive but
            that no link names (its description can contradict older text: *Lionel Messi* "plays for Inter
            Miami"), and add the mentions found outside the links so far; a given span answered NIL (D2KB)
            takes its answer from that reading too (`annotator.pipeline.title_only_look`). Not in the paper
            (docs/decisions.md#title-only-look).
        full_titles: at the very end, a mention found end to end grows to its entity's whole title where the text
            goes on to spell it out ("Madison" linked to *Madison, Wisconsin*, followed by ", Wisconsin"), and a text
            "X, Y" that is a KB title and holds a link becomes one mention of that entry ("Parkersburg, Iowa" where
            only *Iowa* was linked); the links inside go (`annotator.pipeline.full_titles`). Not in the paper
            (docs/decisions.md#full-titles).
        enclosing_names: after that, a link found end to end inside a longer name that is exactly the title of a
            described KB entry ("Canada" in "Air Canada") becomes one link to that entry; the links inside go
            (`annotator.pipeline.enclosing_names`). Not in the paper (docs/decisions.md#enclosing-names).
        written_initials: before that, a link whose text is a name with a middle initial ("George W. Bush") that its
            entity's title spells otherwise (*George H. W. Bush*) goes to a described candidate of its passages whose
            title is the text, initials and all (`annotator.pipeline.written_initials`). Not in the paper
            (docs/decisions.md#written-initials).
        title_answers: then a span given to disambiguate (D2KB) that was answered NIL takes the KB entry whose title
            is its text ignoring case, where the span begins in lower case ("car": *Car*) or the entry is described
            and the span's best candidate already (`annotator.pipeline.title_answers`). Not in the paper
            (docs/decisions.md#title-answers).
        national_teams: in a document whose links name national teams of one kind (*Turkey national football
            team*), or whose text names a competition of country teams ("Fed Cup": *Spain Fed Cup team*), a link to a
            country written as its title ("Belgium") takes the country's team of that kind,
            unless the text reads it as a place ("in Belgium", "TOFTIR, Faroe Islands";
            `annotator.pipeline.national_teams`). Not in the paper (docs/decisions.md#national-teams).
        spelling_variants: last, a link to a KB entry whose title differs from others' in accents or letter case
            only takes the one of them titled as Wikipedia does: the most accents, then the described one (*Ogun
            Temizkanoglu*: *Ogün Temizkanoğlu*; *Chişinău*: *Chișinău*); entries of which two are described are
            left alone (`annotator.pipeline.spelling_variants`). Not in the paper
            (docs/decisions.md#spelling-variants).
        decision: the learned decision (`annotator.decision`, the checkpoint's `decision/`) chooses each span's
            entity or NIL from the readings, the name priors, prominence and the entity graph
            (`annotator.knowledge`), in place of decoding's choice and of the rule stages it learned.
        name_test: the reader reads a (passage, candidate) pair only when the passage can name the candidate (a
            word of its title, or one such a word begins, its initials in capitals, a name the name priors give it:
            `annotator.pipeline.name_test`); about half the pairs, at the same F1 (docs/decisions.md#name-test).
        name_test_stand_in: the rerank logit of a pair the name test leaves unread, so that each passage's softmax
            keeps about its denominator (fitted by `python -m bench.name_test_fit` on AIDA train).
        read_entity_len: when above 0, the reader reads only the first this many wordpieces of each entity input
            (the index keeps `max_entity_len`); 0 reads them whole.
    """

    encoder: str = "all-MiniLM-L6-v2"
    passage_len: int = 32
    stride: int = 16
    add_topic: bool = True
    max_topic_len: int = 4
    max_entity_len: int = 64
    top_k: int = 16
    top_spans: int = 3
    max_span_len: int = 10
    threshold: float = 0.02
    normalize: bool = True
    shared_towers: bool = False
    shared_embeddings: bool = True
    document_candidates: bool = True
    short_names: bool = True
    mention_candidates: int = 3
    title_candidates: int = 3
    title_only_look: bool = True
    full_titles: bool = True
    enclosing_names: bool = True
    written_initials: bool = True
    title_answers: bool = True
    national_teams: bool = True
    spelling_variants: bool = True
    decision: bool = False
    name_test: bool = True
    name_test_stand_in: float = -1.04
    read_entity_len: int = 0

    def __post_init__(self) -> None:
        if not 3 <= self.passage_len or not 1 <= self.stride <= self.passage_len - 2:
            raise ConfigError(f"need passage_len >= 3 and 1 <= stride <= passage_len - 2, "
                              f"got passage_len={self.passage_len}, stride={self.stride}")
        for name in ("mention_candidates", "title_candidates"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be 0 (off) or more, got {getattr(self, name)}")
        if not 0.0 <= self.threshold < 1.0:
            raise ConfigError(f"threshold must lie in [0, 1), got {self.threshold}")

    @classmethod
    def paper(cls) -> LinkerConfig:
        """The paper's setup (section 2): K=100, γ=0.05, 128-wordpiece entities, separate towers with their own
        embeddings, retrieval only. What a retriever trained from scratch starts from."""
        return cls(max_entity_len=128, top_k=100, threshold=0.05, shared_embeddings=False,
                   document_candidates=False, short_names=False, mention_candidates=0, title_candidates=0,
                   title_only_look=False, full_titles=False, enclosing_names=False, written_initials=False,
                   title_answers=False, national_teams=False, spelling_variants=False, name_test=False)

    def replace(self, **changes: Any) -> LinkerConfig:
        """A copy with some fields changed (unknown names rejected)."""
        return dataclasses.replace(self, **_checked(changes))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> LinkerConfig:
        """Fields not given keep the defaults (the shipped setup); unknown names are rejected."""
        return cls(**_checked(values))

    def to_file(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def from_file(cls, path: str | Path) -> LinkerConfig:
        try:
            return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
        except ConfigError as error:
            raise ConfigError(f"{path}: {error}") from error


def config_fields() -> tuple[str, ...]:
    """The names of `LinkerConfig`'s fields."""
    return tuple(f.name for f in fields(LinkerConfig))


def _checked(values: Mapping[str, Any]) -> dict[str, Any]:
    known = config_fields()
    unknown = sorted(set(values) - set(known))
    if not unknown:
        return dict(values)
    # Configs saved before the host's settings left config.json hold them: say where they went.
    host = sorted(set(unknown) & {f.name for f in fields(RuntimeSettings)})
    hint = (f"; the host's settings {host} are annotator.runtime.settings.RuntimeSettings (for the service: "
            f"ENTQA_* variables), not saved with the weights" if host else "")
    raise ConfigError(f"unknown config keys {unknown}; valid keys: {sorted(known)}{hint}")
