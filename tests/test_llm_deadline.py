"""One LLM call never outlives llm.deadline: neither a hung endpoint, nor retries, nor a stream
whose tokens trickle in (the recording stub plays the slow LLM)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from flask import Flask, Response

from datafari_rag.config import Settings
from datafari_rag.llm import LlmError, OpenAiLlmService
from datafari_rag.llm.params import LlmParams
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.servers import serve

MESSAGES = [{"role": "user", "content": "Question?"}]


@pytest.fixture(scope="module")
def stub() -> Iterator[tuple[FakeLlm, str]]:
    fake = FakeLlm()
    with serve(fake.app()) as url:
        yield fake, f"{url}/v1"


def service(url: str, deadline: float = 2.0) -> OpenAiLlmService:
    return OpenAiLlmService(
        LlmParams.of(Settings(llm_endpoint=url, llm_timeout=60, llm_max_retries=1, llm_deadline=deadline))
    )


def test_a_hung_llm_is_abandoned_at_the_deadline(stub: tuple[FakeLlm, str]) -> None:
    fake, url = stub
    fake.reset(delay=20)
    began = time.monotonic()
    with pytest.raises(LlmError):
        service(url).generate(MESSAGES)  # type: ignore[arg-type]
    assert time.monotonic() - began < 3.0  # before: two attempts of llm.timeout (120 s)


def test_a_trickling_stream_is_cut_at_the_deadline(stub: tuple[FakeLlm, str]) -> None:
    fake, url = stub
    fake.reset(answer=lambda _: "word " * 100, chunk_delay=0.2)  # 20 s of tokens, each well within llm.timeout
    began, pieces = time.monotonic(), []
    with pytest.raises(LlmError, match="did not end within 2 s"):
        for piece in service(url).stream(MESSAGES):  # type: ignore[arg-type]
            pieces.append(piece)
    assert time.monotonic() - began < 3.0 and 3 <= len(pieces) < 100


def test_an_answer_within_the_deadline_is_untouched(stub: tuple[FakeLlm, str]) -> None:
    fake, url = stub
    fake.reset(answer=lambda _: "one two three", chunk_delay=0.05)
    assert "".join(service(url).stream(MESSAGES)) == "one two three"  # type: ignore[arg-type]
    assert service(url).generate(MESSAGES) == "one two three"  # type: ignore[arg-type]


def slow_body(pieces: int, pause: float) -> Flask:
    """An LLM whose plain answer's body comes a piece every ``pause`` seconds."""
    app = Flask("slow-body")

    @app.post("/v1/chat/completions")
    def completions() -> Response:
        def body() -> Iterator[str]:
            yield '{"choices": [{"message": {"content": "'
            for _ in range(pieces):
                time.sleep(pause)  # each piece well within llm.timeout
                yield "word "
            yield '"}}]}'

        return Response(body(), mimetype="application/json")

    return app


def test_a_trickling_plain_answer_is_cut_at_the_deadline() -> None:
    with serve(slow_body(100, 0.2)) as url:
        began = time.monotonic()
        with pytest.raises(LlmError, match="did not end within 2 s"):
            service(f"{url}/v1").generate(MESSAGES)  # type: ignore[arg-type]
        assert time.monotonic() - began < 3.0


def test_a_stream_whose_pieces_come_slowly_ends_at_the_deadline_not_at_its_next_piece(
    stub: tuple[FakeLlm, str],
) -> None:
    """A piece every 1.6 s against a 2 s deadline: the read waiting for the second piece is
    interrupted at 2 s (it used to end when that piece came, at 3.2 s: the 2.3–2.9 s overshoot
    seen with a slow LLM's 30 s deadline)."""
    fake, url = stub
    fake.reset(answer=lambda _: "a b c d e f", chunk_delay=1.6)
    began, pieces = time.monotonic(), []
    with pytest.raises(LlmError, match="did not end within 2 s"):
        for piece in service(url).stream(MESSAGES):  # type: ignore[arg-type]
            pieces.append(piece)
    assert time.monotonic() - began < 2.3 and pieces == ["a "]
    assert "".join(service(url, deadline=20).stream(MESSAGES)) == "a b c d e f"  # type: ignore[arg-type]


def test_a_plain_answer_whose_body_comes_slowly_ends_at_the_deadline() -> None:
    with serve(slow_body(3, 1.6)) as url:
        began = time.monotonic()
        with pytest.raises(LlmError, match="did not end within 2 s"):
            service(f"{url}/v1").generate(MESSAGES)  # type: ignore[arg-type]
        assert time.monotonic() - began < 2.3  # it used to end at the next piece, 3.2 s


def test_a_blank_model_is_left_out_of_the_request(stub: tuple[FakeLlm, str]) -> None:
    fake, url = stub
    fake.reset()
    blank = OpenAiLlmService(LlmParams.of(Settings(llm_endpoint=url, llm_model="")))
    blank.generate(MESSAGES)  # type: ignore[arg-type]
    "".join(blank.stream(MESSAGES))  # type: ignore[arg-type]
    named = OpenAiLlmService(LlmParams.of(Settings(llm_endpoint=url, llm_model="mistral")))
    named.generate(MESSAGES)  # type: ignore[arg-type]
    assert fake.models == [None, None, "mistral"]


@pytest.mark.parametrize(
    "reply",
    [
        {"error": {"message": "The model is overloaded", "type": "server_error", "code": 503}},
        {"error": "The model is overloaded"},
        {"object": "chat.completion", "choices": []},
        {"id": "x"},
    ],
)
def test_a_200_holding_an_error_object_or_no_choice_is_an_llm_failure(reply: dict[str, object]) -> None:
    """Not an empty answer (which the pipeline would report as ragNoValidAnswer): a failed call,
    reported as one, with what the endpoint said."""
    app = Flask("gateway")

    @app.post("/v1/chat/completions")
    def completions() -> Response:
        return Response(json.dumps(reply), mimetype="application/json")

    with serve(app) as url, pytest.raises(LlmError, match=r"overloaded|not a chat completion"):
        service(f"{url}/v1").generate(MESSAGES)  # type: ignore[arg-type]


def test_a_connection_broken_in_the_middle_of_the_body_is_an_llm_failure() -> None:
    """The body breaks off (the endpoint dies while answering): the call fails as an LLM failure,
    sent again once (llm.maxRetries), never as an error of another kind that escapes the service
    (the openai client's transport is httpx2: an httpx error class caught nothing)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        sent: list[int] = []

        def answer_half() -> None:
            while True:
                connection, _ = server.accept()
                with connection:
                    sent.append(1)
                    connection.recv(65536)
                    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                    connection.sendall(head + b'{"choices": [{"mess')

        threading.Thread(target=answer_half, daemon=True).start()
        url = f"http://127.0.0.1:{server.getsockname()[1]}/v1"
        with pytest.raises(LlmError, match="The LLM call failed"):  # cut short, or reset
            service(url, deadline=10).generate(MESSAGES)  # type: ignore[arg-type]
        assert len(sent) == 2  # the first attempt and one retry


def test_an_error_answered_with_http_200_fails_the_call_streamed_or_not(stub: tuple[FakeLlm, str]) -> None:
    """vLLM answers some failures with HTTP 200 and ``{"object": "error", …}``, even to a stream:
    a failed call (the message kept), never an empty answer."""
    fake, url = stub
    fake.reset(answer=lambda _: {"object_error": "The model is not loaded."})  # type: ignore[arg-type,return-value]
    with pytest.raises(LlmError, match="answered with an error: The model is not loaded"):
        service(url).generate(MESSAGES)  # type: ignore[arg-type]
    with pytest.raises(LlmError, match="answered with an error: The model is not loaded"):
        list(service(url).stream(MESSAGES))  # type: ignore[arg-type]
