"""The knowledge base: its file (read, fingerprinted), the entity descriptions shown with a link, and cutting a
smaller KB from a larger one."""
