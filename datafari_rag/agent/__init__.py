"""The local AI agent: an OpenAI-compatible embedding service backed by a real model."""
