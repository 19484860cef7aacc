"""The web UI's pages."""
