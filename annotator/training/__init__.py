"""Training EntQA's retriever and reader on NIF corpora (see `python -m annotator.train --help`)."""
