"""Independent NIF readers (rdflib SPARQL, pynif, Redland rapper, Oxigraph, Apache Jena riot) for cross-checks."""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

NIF = "http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#"
ITSRDF = "http://www.w3.org/2005/11/its/rdf#"
# GERBIL's own queries (io/nif/DocumentListParser.java, AnnotationParser.java).
CONTEXT_QUERY = f"PREFIX nif: <{NIF}> SELECT ?context ?text WHERE {{ ?context a nif:Context . ?context nif:isString ?text }}"
ANNOTATION_QUERY = (f"PREFIX nif: <{NIF}> PREFIX itsrdf: <{ITSRDF}> SELECT ?a ?begin ?end ?uri WHERE {{ "
                    "?a nif:referenceContext ?context ; nif:beginIndex ?begin ; nif:endIndex ?end . "
                    "OPTIONAL { ?a itsrdf:taIdentRef ?uri } }")
JAVA_JAR_DIR = Path("/usr/share/java")
_TIMEOUT_S = 120
_RAPPER_STRING_END = re.compile("[\x00\ufffe\uffff]")


class ReaderUnavailable(RuntimeError):
    """The reader's library or program is not installed here."""


@dataclass(frozen=True)
class Reading:
    """What a reader found: the context string and `(start, end, sorted uris)` per annotation."""

    text: str
    annotations: frozenset[tuple[int, int, tuple[str, ...]]]


def _collect(text: str, rows: list[tuple[str, int, int, str | None]]) -> Reading:
    spans: dict[str, tuple[int, int, set[str]]] = {}
    for node, start, end, uri in rows:
        _, _, uris = spans.setdefault(node, (start, end, set()))
        if uri is not None:
            uris.add(uri)
    return Reading(text, frozenset((start, end, tuple(sorted(uris))) for start, end, uris in spans.values()))


def read_rdflib(body: bytes) -> Reading:
    """rdflib, queried with GERBIL's SPARQL."""
    from rdflib import Graph

    graph = Graph().parse(data=body.decode("utf-8"), format="turtle")
    (context, text), = graph.query(CONTEXT_QUERY)
    rows = graph.query(ANNOTATION_QUERY, initBindings={"context": context})
    return _collect(str(text), [(str(a), int(b), int(e), None if u is None else str(u)) for a, b, e, u in rows])


def read_oxigraph(body: bytes) -> Reading:
    """Oxigraph (Rust), queried with GERBIL's SPARQL."""
    try:
        import pyoxigraph
    except ImportError as error:
        raise ReaderUnavailable("pyoxigraph is not installed (pip install pyoxigraph)") from error
    store = pyoxigraph.Store()
    store.load(body, format=pyoxigraph.RdfFormat.TURTLE)
    (solution,) = list(store.query(CONTEXT_QUERY))
    context, text = solution["context"], solution["text"].value
    rows = store.query(ANNOTATION_QUERY.replace("?context", str(context)))
    return _collect(text, [(str(row["a"]), int(row["begin"].value), int(row["end"].value),
                            None if row["uri"] is None else row["uri"].value) for row in rows])


def read_pynif(body: bytes) -> Reading:
    """pynif: keeps one itsrdf:taIdentRef per phrase, so its URI tuples have one element at most."""
    try:
        from pynif import NIFCollection
    except ImportError as error:
        raise ReaderUnavailable(f"pynif is not importable ({error})") from error
    (context,) = NIFCollection.loads(body.decode("utf-8"), format="turtle").contexts
    return _collect(context.mention, [(str(phrase.original_uri), phrase.beginIndex, phrase.endIndex, phrase.taIdentRef)
                                      for phrase in context.phrases])


def read_rapper(body: bytes) -> Reading:
    """Redland raptor's `rapper`, Turtle → N-Triples."""
    if shutil.which("rapper") is None:
        raise ReaderUnavailable("rapper is not installed (apt-get install -y raptor2-utils)")
    return _read_ntriples(_run(["rapper", "-q", "-i", "turtle", "-o", "ntriples", "-", "http://example.org/base"],
                               body))


def as_rapper_reads(text: str) -> str:
    """`text` as rapper reads it back from a string literal, however spelled: cut at the first NUL, U+FFFE or
    U+FFFF (raptor keeps C strings, and ends its UTF-8 decoding at the BMP noncharacters)."""
    return _RAPPER_STRING_END.split(text, maxsplit=1)[0]


def read_jena(body: bytes) -> Reading:
    """Apache Jena's `riot`, Turtle → N-Triples, from the Debian jars (see `jena_classpath`)."""
    if shutil.which("java") is None or not (JAVA_JAR_DIR / "jena-cmds.jar").exists():
        raise ReaderUnavailable("Jena is not installed (apt-get install -y libapache-jena-java)")
    with tempfile.TemporaryDirectory() as folder:
        classpath = jena_classpath(Path(folder))
        return _read_ntriples(_run(["java", "-cp", classpath, "riotcmd.riot", "--syntax=turtle",
                                    "--output=ntriples", "-"], body))


def jena_classpath(folder: Path) -> str:
    """A classpath on which Debian's Jena 4.5 starts under Java 17.

    Debian's jena-core relocates the bundled Xerces classes to package `xerces` but leaves their
    message bundles under `org/apache/jena/ext/xerces`, so Xerces' built-in datatypes fail to
    initialise (ExceptionInInitializerError, "internal error" in XSSimpleTypeDecl.applyFacets1).
    Copying the bundles to `xerces/` in a folder on the classpath fixes it. All of /usr/share/java
    is used for the dependencies, except slf4j/log4j bridges, which clash with each other; slf4j-nop
    silences logging.
    """
    with zipfile.ZipFile(JAVA_JAR_DIR / "jena-core.jar") as jar:
        prefix = "org/apache/jena/ext/xerces/"
        for name in jar.namelist():
            if name.startswith(prefix) and name.endswith(".properties"):
                target = folder / "xerces" / name[len(prefix):]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(jar.read(name))
    jars = [str(jar) for jar in sorted(JAVA_JAR_DIR.glob("*.jar"))
            if not re.search(r"-\d[\w.]*\.jar$", jar.name) and not re.search(r"slf4j|log4j", jar.name)]
    return ":".join([str(folder), *jars, str(JAVA_JAR_DIR / "slf4j-api.jar"), str(JAVA_JAR_DIR / "slf4j-nop.jar")])


READERS: dict[str, Callable[[bytes], Reading]] = {
    "rdflib": read_rdflib, "pynif": read_pynif, "rapper": read_rapper, "oxigraph": read_oxigraph, "jena": read_jena}


def _run(command: list[str], body: bytes) -> str:
    result = subprocess.run(command, input=body, capture_output=True, timeout=_TIMEOUT_S, check=False)
    if result.returncode != 0:
        raise AssertionError(f"{command[0]} failed ({result.returncode}): {result.stderr.decode(errors='replace')}")
    return result.stdout.decode("utf-8")


_TRIPLE = re.compile(r'^(<[^>]*>|_:\S+) <([^>]*)> (.*) \.\s*$')
_ESCAPE = re.compile(r'\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[tbnrf"\'\\])')
_SIMPLE_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: chr(int(m.group(1)[1:], 16)) if m.group(1)[0] in "uU"
                       else _SIMPLE_ESCAPES[m.group(1)], text)


def _term(term: str) -> str:
    if term.startswith("<"):
        return _unescape(term[1:-1])
    if term.startswith('"'):
        return _unescape(term[1:term.rindex('"')])
    return term


def _read_ntriples(ntriples: str) -> Reading:
    """Applies GERBIL's selection to N-Triples (one triple per line)."""
    triples = []
    for line in ntriples.splitlines():
        match = _TRIPLE.match(line)
        if match:
            triples.append((_term(match.group(1)), _unescape(match.group(2)), _term(match.group(3))))
        elif line.strip():
            raise AssertionError(f"unexpected N-Triples line: {line!r}")
    values: dict[tuple[str, str], list[str]] = {}
    for subject, predicate, obj in triples:
        values.setdefault((subject, predicate), []).append(obj)
    rdf_type = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
    (context,) = [s for s, p, o in triples if p == rdf_type and o == NIF + "Context" and (s, NIF + "isString") in values]
    rows = []
    for subject in {s for s, p, o in triples if p == NIF + "referenceContext" and o == context}:
        begin, end = values.get((subject, NIF + "beginIndex")), values.get((subject, NIF + "endIndex"))
        if begin and end:
            uris = values.get((subject, ITSRDF + "taIdentRef"), [])
            rows += [(subject, int(begin[0]), int(end[0]), uri) for uri in uris] or [(subject, int(begin[0]),
                                                                                        int(end[0]), None)]
    return _collect(values[(context, NIF + "isString")][0], rows)
