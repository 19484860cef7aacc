"""Every answer gives its slot back: a stream read to its end, a stream closed unread, an error."""

from __future__ import annotations

from datafari_rag.app import create_app
from datafari_rag.config import Settings

API = "/Datafari/rest/v2.0"


def test_streams_give_their_slot_back_however_they_end() -> None:
    app = create_app(Settings(solr_url="http://127.0.0.1:9/solr", server_threads=10, server_reserved_threads=8))
    client = app.test_client()
    for _ in range(5):  # read to the end, never closed (as a test client or a careless server does)
        text = client.post(f"{API}/ai/stream", json={"query": "anything"}).get_data(as_text=True)
        assert '"stream.completed"' in text and "Too many answers" not in text
    for _ in range(5):  # closed without being read
        client.post(f"{API}/ai/stream", json={"query": "anything"}, buffered=False).close()
    for _ in range(5):  # the plain answer, failing on the missing Solr
        body = client.post(f"{API}/ai/rag", json={"query": "anything"}).get_json()
        assert (
            body["content"]["error"]["label"] == "ragTechnicalError"
            and "Too many" not in body["content"]["error"]["reason"]
        )


def test_beyond_the_slots_answers_are_refused_at_once() -> None:
    app = create_app(Settings(solr_url="http://127.0.0.1:9/solr", server_threads=10, server_reserved_threads=8))
    with app.test_request_context():
        pool = app.extensions["answer_slots"]
        pool.take(), pool.take()
        response = app.test_client().post(f"{API}/ai/rag", json={"query": "anything"}).get_json()
        assert "Too many answers are in progress (2)" in response["content"]["error"]["reason"]
        streamed = app.test_client().post(f"{API}/ai/stream", json={"query": "anything"})
        assert streamed.mimetype == "application/json" and streamed.get_json()["status"] == "ERROR"
        pool.give_back(), pool.give_back()
