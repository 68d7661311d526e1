"""The model: settings, tokenization into passages and entity inputs, the retriever's two towers, the reader, and
the checkpoint folder they are saved in."""
