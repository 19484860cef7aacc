"""What every request goes through: identity, bodies and their shapes (chat-core's fields among
them), the HTTP contract and its OpenAPI document, Datafari's errors, capacity."""
