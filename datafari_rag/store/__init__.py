"""The relational store (SQLite by default, PostgreSQL in production): its engine and Alembic
migrations, its tables, the transaction every store writes in, and the stores of the tables every
feature shares (local users, the sign-in throttle, settings overrides, the OAuth server's grants).
Feature stores (conversations, workflows, index jobs) live with their feature and take the engine."""

from .handle import StoreHandle
from .transaction import StoreUnavailable, transaction

__all__ = ["StoreHandle", "StoreUnavailable", "transaction"]
