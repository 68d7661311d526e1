"""Linking a document: `Linker` runs the stages (retrieve, read, decode, the second-stage post-processors) over a
document's passages and turns the result into mentions."""
