"""Which history messages reach a prompt: filters only narrow, tool results are pruned."""

from __future__ import annotations

from datafari_rag.rag.history import EVERY_MESSAGE, HistoryFilter, classes_of, prompt_history


def test_a_request_filter_only_narrows_the_settings() -> None:
    settings = HistoryFilter(frozenset({"text", "faq"}), {"team": frozenset({"a", "b"})})
    asked = HistoryFilter(frozenset({"faq", "think"}), {"team": frozenset({"b", "c"}), "lang": frozenset({"fr"})})
    both = settings.narrowed(asked)
    assert both.block_classes == {"faq"} and both.metadata == {"team": {"b"}, "lang": {"fr"}}
    assert EVERY_MESSAGE.narrowed(asked) == asked and settings.narrowed(EVERY_MESSAGE) == settings
    assert classes_of(" text, faq ,") == {"text", "faq"} and classes_of("") is None


def test_metadata_keeps_only_messages_tagged_with_an_accepted_value() -> None:
    keep = HistoryFilter(metadata={"team": frozenset({"a"})})
    messages = [
        {"role": "user", "content": "tagged a", "metadata": {"team": "a"}},
        {"role": "user", "content": "tagged b", "metadata": {"team": "b"}},
        {"role": "user", "content": "untagged"},
    ]
    assert [m["content"] for m in prompt_history(messages, keep, 0)] == ["tagged a"]


def test_tool_results_beyond_the_last_ones_are_pruned_and_capped() -> None:
    messages = [{"role": "tool", "content": f"r{i}" + "x" * 3000, "name": "t"} for i in range(3)]
    kept = prompt_history(messages, EVERY_MESSAGE, 2)
    assert [m["content"][:17] for m in kept] == ["Result of t: r1xx", "Result of t: r2xx"]
    assert all(m["role"] == "assistant" and len(m["content"]) == len("Result of t: ") + 2000 for m in kept)
    assert prompt_history(messages, EVERY_MESSAGE, 0) == []
