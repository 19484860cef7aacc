"""MCP: the product's tools for MCP clients, and the OAuth sign-in they go through."""
