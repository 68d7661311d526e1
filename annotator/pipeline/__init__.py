"""Linking a document: `Linker` (linker.py) runs the stages (the seams in stages.py) over one `Document` per text
(document.py): retrieval (candidate_retrieval.py, with the mention table's names, mention_table.py), reading
(reading.py), decoding (document_decoding.py over decoding.py and merging.py), then the post-processors (the second
stage, document_candidates.py; short_names.py); loading.py builds them from a checkpoint."""
