"""MSNBC (Cucerzan 2007) Problems XML + raw texts → documents, as GERBIL's `MSNBCDataset` reads them."""
from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from nif.data_types import NifAnnotation, NifDocument

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Instance:
    start: int  # UTF-16 code units, as Java counts
    length: int
    surface: str
    uris: frozenset[str]


def _text(element: ET.Element, tag: str) -> str | None:
    child = element.find(tag)
    return None if child is None else "".join(child.itertext()).strip()


def _instances(problem: ET.Element) -> list[_Instance]:
    instances = []
    for node in problem.iter("ReferenceInstance"):
        surface, offset, length = _text(node, "SurfaceForm"), _text(node, "Offset"), _text(node, "Length")
        uris = {"".join(c.itertext()).strip() for c in node.iter("ChosenAnnotation")}
        # GERBIL discards incomplete instances; `*null*` is a URI like any other, hence an emerging entity.
        if surface is None or not offset or not length or not uris:
            logger.warning("incomplete MSNBC ReferenceInstance discarded: %r", surface)
            continue
        # addDBpediaUris: both string replacements, exactly as GERBIL writes them.
        uris |= {u.replace("en.wikipedia.org/wiki", "dbpedia.org/resource") for u in uris} | {
            u.replace("wikipedia.org/wiki", "dbpedia.org/resource") for u in uris}
        instances.append(_Instance(int(offset), int(length), surface, frozenset(uris)))
    return instances


def _drop_nested_duplicates(instances: list[_Instance]) -> list[_Instance]:
    """GERBIL's `mergeSubNamedEntity`: a span inside another (not shorter) one sharing a URI is dropped."""
    by_length = sorted(instances, key=lambda i: i.length)  # stable, like Arrays.sort on objects
    dropped = set()
    for a, inner in enumerate(by_length):
        for outer in by_length[a + 1:]:
            if (inner.start >= outer.start and inner.start + inner.length <= outer.start + outer.length
                    and not inner.uris.isdisjoint(outer.uris)):
                dropped.add(a)
                break
    return [inst for a, inst in enumerate(by_length) if a not in dropped]


def _utf16_to_code_points(text: str) -> list[int]:
    """Maps each UTF-16 offset of `text` (and its end) to a code-point offset."""
    table = []
    for i, char in enumerate(text):
        table.extend([i] * (2 if ord(char) > 0xFFFF else 1))
    table.append(len(text))
    return table


def read_document(problem_file: Path, texts_dir: Path, *, uri_prefix: str = "http://msnbc/") -> NifDocument:
    """Reads one MSNBC problem file and the raw text it names.

    Args:
        problem_file: a `Problems/*` XML file (`ReferenceProblem` with `ReferenceFileName` and
            `ReferenceInstance`s carrying `SurfaceForm`, `Offset`, `Length`, `ChosenAnnotation`).
        texts_dir: the folder of raw texts (`RawTextsSimpleChars_utf8`).
        uri_prefix: the document URI is `<uri_prefix><ReferenceFileName>`.

    Returns:
        The document, offsets converted from Java's UTF-16 units to code points.
    """
    problem = ET.parse(problem_file).getroot()
    name = _text(problem, "ReferenceFileName")
    if not name:
        raise ValueError(f"MSNBC problem file {problem_file} names no ReferenceFileName")
    # Bytes decoded as UTF-8 with newlines kept as they are: the offsets count every character.
    text = (texts_dir / name).read_bytes().decode("utf-8")
    position = _utf16_to_code_points(text)
    uri = f"{uri_prefix}{name}"
    annotations = []
    for inst in _drop_nested_duplicates(_instances(problem)):
        start, end = position[inst.start], position[inst.start + inst.length]
        if text[start:end] != inst.surface:
            logger.warning("%s: surface form %r differs from the text %r", uri, inst.surface, text[start:end])
        annotations.append(NifAnnotation(start, end, tuple(sorted(inst.uris))))
    return NifDocument(uri, text, tuple(sorted(annotations, key=lambda a: (a.start, a.end))))


def read_documents(folder: Path, *, uri_prefix: str = "http://msnbc/") -> list[NifDocument]:
    """Reads every problem file under `folder/Problems` against the texts in `folder/RawTextsSimpleChars_utf8`.

    Args:
        folder: the MSNBC dataset folder.
        uri_prefix: prefix of the document URIs.

    Returns:
        The documents, in file-name order (GERBIL uses the directory listing order).
    """
    texts_dir = folder / "RawTextsSimpleChars_utf8"
    return [read_document(f, texts_dir, uri_prefix=uri_prefix)
            for f in sorted((folder / "Problems").iterdir()) if f.is_file()]
