"""The RDF namespaces NIF 2.0 documents use, shared by the parser and the writer."""
from __future__ import annotations

from rdflib import Namespace

NIF = Namespace("http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#")
ITSRDF = Namespace("http://www.w3.org/2005/11/its/rdf#")
