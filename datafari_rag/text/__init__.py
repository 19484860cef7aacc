"""What the product knows of text itself, below the features that index and search it: a text's
language, and the embedding model's tokens."""
