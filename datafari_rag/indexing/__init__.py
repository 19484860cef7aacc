"""Getting documents into FileShare and their chunks, with vectors, into VectorMain."""
