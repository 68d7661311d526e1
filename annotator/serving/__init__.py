"""The service's model thread: one thread per worker links the documents of all request threads, in batches."""
