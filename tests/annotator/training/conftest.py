"""Tiny hand-written NIF corpus and KB, and a 2-layer random BERT with MiniLM's vocabulary, for training tests."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import torch
from transformers import BertConfig, BertModel

from annotator.model.config import LinkerConfig
from annotator.model.encoders import MINILM, load_tokenizer, resolve_encoder
from annotator.model.reader import Reader
from annotator.model.retriever import DualEncoder
from annotator.model.tokenization import InputBuilder

PREFIXES = """@prefix nif: <http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#> .
@prefix itsrdf: <http://www.w3.org/2005/11/its/rdf#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""

# Made-up sentences (no corpus text): (document URI, text, [(surface, URI)]).
DOCUMENTS = [
    ("http://example.org/doc/0", "Ada Lovelace worked with Charles Babbage in London on the Analytical Engine.",
     [("Ada Lovelace", "http://dbpedia.org/resource/Ada_Lovelace"),
      ("Charles Babbage", "http://dbpedia.org/resource/Charles_Babbage"),
      ("London", "http://dbpedia.org/resource/London"),
      ("Analytical Engine", "http://aida/notInWiki/Analytical+Engine")]),
    ("http://example.org/doc/1", "Zürich and Paris signed a treaty; zürich hosted the talks near Lake Geneva.",
     [("Zürich", "http://dbpedia.org/resource/Zürich"),
      ("Paris", "http://dbpedia.org/resource/paris"),
      ("zürich", "http://dbpedia.org/resource/ZÜRICH"),
      ("Lake Geneva", "http://dbpedia.org/resource/Lake_Geneva")]),
]

KB = [("Ada Lovelace", "Ada Lovelace was an English mathematician."),
      ("Charles Babbage", ""),
      ("London", "London is the capital of England."),
      ("Zürich", "Zürich is a city in Switzerland."),
      ("Paris", ""),
      ("Berlin", "Berlin is the capital of Germany."),
      ("Analytical engine (song)", ""),
      ("Lovelace (film)", "Lovelace is a film."),
      ("Geneva", "Geneva is a city."),
      ("Tokyo", "")]


def nif_turtle(documents: list[tuple[str, str, list[tuple[str, str]]]]) -> str:
    lines = [PREFIXES]
    for uri, text, mentions in documents:
        context = f"<{uri}#char=0,{len(text)}>"
        lines.append(f'{context} a nif:Context ; nif:beginIndex "0"^^xsd:nonNegativeInteger ; '
                     f'nif:endIndex "{len(text)}"^^xsd:nonNegativeInteger ; nif:isString {json.dumps(text)} .')
        cursor = 0
        for surface, target in mentions:
            start = text.index(surface, cursor)
            cursor = end = start + len(surface)
            lines.append(f'<{uri}#char={start},{end}> a nif:Phrase ; nif:anchorOf {json.dumps(surface)} ; '
                         f'nif:beginIndex "{start}"^^xsd:nonNegativeInteger ; nif:endIndex "{end}"^^xsd:nonNegativeInteger ; '
                         f'nif:referenceContext {context} ; itsrdf:taIdentRef <{target}> .')
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="session")
def tokenizer():
    return load_tokenizer(resolve_encoder(MINILM))


@pytest.fixture
def linker_config() -> LinkerConfig:
    # Short passages so that the fixture documents span several overlapping windows.
    return LinkerConfig.paper().replace(passage_len=10, stride=4, max_entity_len=24, top_k=4)


@pytest.fixture
def builder(tokenizer, linker_config) -> InputBuilder:
    return InputBuilder(tokenizer, linker_config)


def tiny_bert(tokenizer) -> BertModel:
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0)
    return BertModel(config, add_pooling_layer=False)


@pytest.fixture
def retriever(tokenizer) -> DualEncoder:
    torch.manual_seed(0)
    return DualEncoder(tiny_bert(tokenizer), tiny_bert(tokenizer))


@pytest.fixture
def shared_retriever(tokenizer) -> DualEncoder:
    torch.manual_seed(0)
    return DualEncoder(tiny_bert(tokenizer))


@pytest.fixture
def reader(tokenizer) -> Reader:
    torch.manual_seed(0)
    return Reader(tiny_bert(tokenizer))


@pytest.fixture
def corpus_path(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.ttl"
    path.write_text(nif_turtle(DOCUMENTS), encoding="utf-8")
    return path


@pytest.fixture
def kb_path(tmp_path: Path) -> Path:
    path = tmp_path / "kb.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for title, text in KB:
            f.write(json.dumps({"title": title, "text": text, "qid": None}, ensure_ascii=False) + "\n")
    return path


@pytest.fixture
def encoder_dir(tmp_path: Path, tokenizer) -> Path:
    """A local encoder folder (tiny random BERT + MiniLM's tokenizer) for the command line."""
    directory = tmp_path / "tiny-bert"
    torch.manual_seed(0)
    tiny_bert(tokenizer).save_pretrained(str(directory))
    tokenizer.save_pretrained(str(directory))
    return directory
