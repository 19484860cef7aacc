"""Helpers shared by the test suite and the benchmarks: the product's servers run in-process or
as processes on free ports, a recording OpenAI-compatible LLM stub, and the ACL leak harness.

Nothing in the product imports this package; it ships so that ``bench/`` and ``tests/`` (and a
deployment's own checks) use the same helpers.
"""
