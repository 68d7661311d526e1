"""Training EntQA's retriever and reader on corpus documents (`data.CorpusDocument`); the command line that reads
NIF corpora and scores the dev set with GERBIL's measures is `python -m annotator.cli.train` (`entqa train`)."""
