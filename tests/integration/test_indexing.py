"""The sidecar's writer on the real Solr with the real embedding model: what it validates and
forwards, and what FileShare's processor makes of it in VectorMain."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.cli import main as cli
from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.indexing.maintenance import reconcile, sync
from datafari_rag.solr import SolrClient, user_properties
from datafari_rag.solr.bootstrap import BootstrapReport, bootstrap
from tests.integration.conftest import cli_environment

ACL = {"allow_token_document": ["team-a"], "deny_token_share": ["contractors"], "allow_token_parent": ["p"]}
SENTENCES = [f"Sentence number {i} describes the cooling pump maintenance step {i} in detail." for i in range(60)]


@pytest.fixture(scope="module")
def settings(settings: Settings) -> Settings:
    """Collections of this module only, cut in chunks of 40 tokens (FileShare's processor's
    ``vector.chunksize``): what the module indexes stays out of the others."""
    return settings.replace(collection_main="idx_FileShare", collection_vector="idx_VectorMain", vector_chunk_size=40)


@pytest.fixture(scope="module")
def bootstrapped(solr: SolrClient, settings: Settings) -> BootstrapReport:
    report = bootstrap(solr, settings)
    user_properties.set_properties(solr, settings.collection_main, {"vector.chunksize": "40"})
    return report


def chunks_of(solr: SolrClient, settings: Settings, parent: str) -> list[dict[str, Any]]:
    query = {
        "q": "*:*",
        "fq": "{!term f=parent_doc v=$p}",
        "p": parent,
        "rows": 1000,
        "sort": "chunk_index asc",
        "fl": "*",
    }
    return solr.get(f"{settings.collection_vector}/internal", query)["response"]["docs"]


def parent_of(solr: SolrClient, settings: Settings, doc_id: str) -> list[dict[str, Any]]:
    query = {"q": "*:*", "fq": "{!term f=id v=$p}", "p": doc_id, "fl": "*"}
    return solr.get(f"{settings.collection_main}/internal", query)["response"]["docs"]


@pytest.fixture
def small_chunks(settings: Settings) -> Settings:
    return settings


@pytest.fixture
def update(
    small_chunks: Settings, bootstrapped: BootstrapReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., dict[str, Any]]:
    monkeypatch.setenv("DATAFARI_RAG_VAR", str(tmp_path))
    client: FlaskClient = create_app(small_chunks.replace(update_trust_local=True)).test_client()

    def post(body: Any, raw: bytes | None = None, **params: str) -> dict[str, Any]:
        data = raw if raw is not None else json.dumps(body).encode()
        response = client.post("/update", data=data, query_string=params, content_type="application/json")
        return {"http": response.status_code, **response.get_json()}

    return post


def test_add_writes_parents_and_chunks_with_copied_fields(
    update: Callable[..., dict[str, Any]], solr: SolrClient, small_chunks: Settings
) -> None:
    doc = {
        "id": "idx-1",
        "title": "Pump manual",
        "url": "file://pump",
        "source": "manuals",
        "extension": "pdf",
        "language": "en",
        "last_modified": "2026-02-03T04:05:06Z",
        "exactContent": " ".join(SENTENCES[:12]),
        "preview_content": "preview",
        **ACL,
    }
    out = update([doc], commit="true")
    assert out["http"] == 200 and out["results"][0] == {"id": "idx-1", "status": "ok"}  # chunks: Solr's count
    kids = chunks_of(solr, small_chunks, "idx-1")
    assert len(kids) >= 3
    assert [k["id"] for k in kids] == [f"idx-1_{i}" for i in range(len(kids))]
    for i, kid in enumerate(kids):
        assert kid["chunk_index"] == i and kid["embedded_content"] == kid["exactContent"]
        assert kid["has_vector"] is True and len(kid["vector_384"]) == 384
        assert kid["title"] == [doc["title"]]  # multi-valued, as Datafari's
        for field in ("url", "source", "extension", "language", "last_modified", *ACL):
            assert kid[field] == doc[field]
        assert "preview_content" not in kid
    assert " ".join(k["embedded_content"] for k in kids) == doc["exactContent"]
    assert parent_of(solr, small_chunks, "idx-1")[0]["exactContent"] == doc["exactContent"]


def test_reindexing_a_shorter_document_drops_its_extra_chunks(
    update: Callable[..., dict[str, Any]], solr: SolrClient, small_chunks: Settings
) -> None:
    update(
        {"add": {"doc": {"id": "idx-shrink", "title": "t", "exactContent": " ".join(SENTENCES[:27])}}}, commit="true"
    )
    before = len(chunks_of(solr, small_chunks, "idx-shrink"))
    update(
        {"add": {"doc": {"id": "idx-shrink", "title": "t", "exactContent": " ".join(SENTENCES[:12])}}}, commit="true"
    )
    after = chunks_of(solr, small_chunks, "idx-shrink")
    assert before >= 9 and 1 <= len(after) < before
    assert [k["chunk_index"] for k in after] == list(range(len(after)))


def test_delete_by_id_and_by_query_remove_children(
    update: Callable[..., dict[str, Any]], solr: SolrClient, small_chunks: Settings
) -> None:
    docs = [
        {"id": f"idx-del-{i}", "title": "t", "source": "old" if i < 2 else "new", "exactContent": SENTENCES[i]}
        for i in range(4)
    ]
    update(docs, commit="true")
    out = update({"delete": {"id": "idx-del-3"}}, commit="true")
    assert out["deleted"] == 1 and not parent_of(solr, small_chunks, "idx-del-3")
    assert not chunks_of(solr, small_chunks, "idx-del-3")
    out = update({"delete": {"query": "source:old AND id:idx-del-*"}}, commit="true")
    assert out["deleted"] == 2
    for i in (0, 1):
        assert not parent_of(solr, small_chunks, f"idx-del-{i}") and not chunks_of(solr, small_chunks, f"idx-del-{i}")
    assert chunks_of(solr, small_chunks, "idx-del-2")


def test_bad_documents_fail_alone(
    update: Callable[..., dict[str, Any]], solr: SolrClient, small_chunks: Settings
) -> None:
    raw = (
        b'[{"id": "idx-good", "exactContent": "A perfectly fine sentence about pumps."},'
        b' {"exactContent": "no id"}, {"id": 42, "exactContent": "numeric id"},'
        b' {"id": "idx-empty", "exactContent": "   "}, {"id": "idx-latin1", "exactContent": "caf\xe9 cr\xe8me"},'
        b' {"id": "idx-surrogate", "exactContent": "broken \\ud800 text"}, "not a document"]'
    )
    out = update(None, raw=raw, commit="true")
    results = out["results"]
    assert [r["status"] for r in results] == ["ok", "error", "error", "error", "error", "error", "error"]
    assert "no 'id'" in results[1]["error"] and "string" in results[2]["error"]
    assert "no text" in results[3]["error"] and "UTF-8" in results[4]["error"] and "UTF-8" in results[5]["error"]
    assert out["added"] == 1 and out["failed"] == 6 and out["http"] == 400  # documents' faults: 400
    assert {r.get("code") for r in results[1:]} == {400} and "code" not in results[0]
    assert chunks_of(solr, small_chunks, "idx-good")
    assert not parent_of(solr, small_chunks, "idx-latin1")


@pytest.mark.parametrize("value", [None, [], "", "  ", 7, {"t": 1}, ["ok", ""], ["ok", 3], ["bad\u001ftoken"]])
def test_an_acl_field_that_is_present_must_hold_a_token(
    update: Callable[..., dict[str, Any]], solr: SolrClient, small_chunks: Settings, value: Any
) -> None:
    """null or [] used to index the document as __nosecurity__: public to everybody."""
    doc = {"id": "idx-acl", "exactContent": SENTENCES[5], "allow_token_document": value}
    [result] = update([doc], commit="true")["results"]
    assert result["status"] == "error" and "allow_token_document" in result["error"]
    assert not parent_of(solr, small_chunks, "idx-acl") and not chunks_of(solr, small_chunks, "idx-acl")


def test_absent_acl_fields_are_public_and_present_ones_are_kept(
    update: Callable[..., dict[str, Any]], solr: SolrClient, small_chunks: Settings
) -> None:
    update([{"id": "idx-acl-ok", "exactContent": SENTENCES[6], "deny_token_share": "g1"}], commit="true")
    [parent] = parent_of(solr, small_chunks, "idx-acl-ok")
    assert parent["deny_token_share"] == ["g1"] and parent["allow_token_document"] == ["__nosecurity__"]
    assert all(k["deny_token_share"] == ["g1"] for k in chunks_of(solr, small_chunks, "idx-acl-ok"))


def test_an_id_with_a_control_character_is_refused(update: Callable[..., dict[str, Any]], solr: SolrClient) -> None:
    [result] = update([{"id": "idx-ctl\u001fx", "exactContent": SENTENCES[7]}], commit="true")["results"]
    assert result["status"] == "error" and "control" in result["error"]


def test_ids_with_query_syntax_shrink_and_delete_exactly(
    update: Callable[..., dict[str, Any]], solr: SolrClient, small_chunks: Settings
) -> None:
    """Chunks are addressed by exact term: quotes, backslashes, braces, $ and operators are just characters."""
    odd = ["idx-a'b\\c", 'idx-q"uote OR *:*', "idx-{!term f=id v=$x} [1 TO *]", "idx-é中 AND -x"]
    update([{"id": i, "exactContent": " ".join(SENTENCES[:20])} for i in odd], commit="true")
    full = {i: len(chunks_of(solr, small_chunks, i)) for i in odd}
    update([{"id": odd[0], "exactContent": " ".join(SENTENCES[:8])}], commit="true")
    assert 1 <= len(chunks_of(solr, small_chunks, odd[0])) < full[odd[0]]
    assert all(len(chunks_of(solr, small_chunks, i)) == full[i] for i in odd[1:])  # the others untouched
    assert update({"delete": {"id": odd[1:3]}}, commit="true")["deleted"] == 2
    assert not chunks_of(solr, small_chunks, odd[1]) and not chunks_of(solr, small_chunks, odd[2])
    assert len(chunks_of(solr, small_chunks, odd[3])) == full[odd[3]]


def test_a_delete_query_solr_cannot_parse_is_the_callers_mistake(update: Callable[..., dict[str, Any]]) -> None:
    out = update({"delete": {"query": "title:(unclosed AND"}}, commit="true")
    assert out["http"] == 400 and out["content"]["error"]["label"] == "updateBadRequest"
    assert "SyntaxError" not in json.dumps(out) and "Solr error" not in json.dumps(out)


def test_malformed_update_is_refused(update: Callable[..., dict[str, Any]]) -> None:
    out = update(None, raw=b"{not json")
    assert out["http"] == 400 and out["status"] == "ERROR" and out["content"]["error"]["label"] == "updateBadRequest"


@contextmanager
def processor_off(solr: SolrClient, settings: Settings) -> Iterator[None]:
    """FileShare's processor switched off by an administrator (``vector config vector.enabled=false``)."""
    user_properties.set_properties(solr, settings.collection_main, {"vector.enabled": "false"})
    try:
        yield
    finally:
        user_properties.set_properties(solr, settings.collection_main, {"vector.enabled": "true"})


def test_documents_written_straight_to_fileshare_get_their_chunks_and_sync_completes_the_rest(
    solr: SolrClient, small_chunks: Settings, bootstrapped: BootstrapReport
) -> None:
    """Any writer's document is chunked in the same request; one written while the processor was
    off gets its chunks from ``sync``; a delete straight to FileShare takes the chunks along."""
    indexer = Indexer.of(solr, small_chunks)
    sync(indexer)
    straight = f"{small_chunks.collection_main}/update"
    solr.post(straight, params={"commit": "true"}, json=[{"id": "idx-direct", "exactContent": SENTENCES[8], **ACL}])
    kids = chunks_of(solr, small_chunks, "idx-direct")
    assert kids and kids[0]["allow_token_document"] == ACL["allow_token_document"]
    with processor_off(solr, small_chunks):
        solr.post(straight, params={"commit": "true"}, json=[{"id": "idx-off", "exactContent": SENTENCES[9]}])
    assert not chunks_of(solr, small_chunks, "idx-off")
    report = sync(indexer)
    assert report.found["new or changed parents"] == 1 and report.fixed["new or changed parents"] == 1
    assert chunks_of(solr, small_chunks, "idx-off")[0]["embedded_content"] == SENTENCES[9]
    solr.post(straight, json={"delete": ["idx-direct", "idx-off"]}, params={"commit": "true"})
    assert not chunks_of(solr, small_chunks, "idx-direct") and not chunks_of(solr, small_chunks, "idx-off")
    assert sync(indexer).found == {"new or changed parents": 0, "vanished parents": 0}


def test_reconcile_finds_orphans_and_stale_chunks(
    solr: SolrClient, small_chunks: Settings, bootstrapped: BootstrapReport
) -> None:
    indexer = Indexer.of(solr, small_chunks)
    indexer.add(
        [{"id": "idx-orphan", "exactContent": SENTENCES[3]}, {"id": "idx-stale", "exactContent": SENTENCES[4]}],
        commit=True,
    )
    with processor_off(solr, small_chunks):  # changed behind the processor's back
        straight = f"{small_chunks.collection_main}/update"
        solr.post(straight, json={"delete": {"id": "idx-orphan"}}, params={"commit": "true"})
        solr.post(straight, params={"commit": "true"}, json=[{"id": "idx-stale", "exactContent": SENTENCES[5]}])
    assert chunks_of(solr, small_chunks, "idx-orphan")
    report = reconcile(indexer)
    assert report.found["orphan chunks (parents)"] >= 1 and report.found["stale or incomplete chunks (parents)"] >= 1
    assert not chunks_of(solr, small_chunks, "idx-orphan")
    assert chunks_of(solr, small_chunks, "idx-stale")[0]["embedded_content"] == SENTENCES[5]


def test_each_chunk_carries_its_own_texts_vector(
    solr: SolrClient, small_chunks: Settings, bootstrapped: BootstrapReport, chunk_embedder: Any
) -> None:
    """The two requests the sidecar sends side by side, and the processor's batches of a request's
    chunks, never mix vectors up: each chunk's is the model's for its text, and kNN finds it."""
    texts = {f"par-{i}": " ".join(SENTENCES[i * 12 : i * 12 + 12]) for i in range(4)}
    results = Indexer.of(solr, small_chunks).add([{"id": k, "exactContent": v} for k, v in texts.items()], commit=True)
    assert all(r.status == "ok" for r in results)
    for doc_id in texts:
        chunks = chunks_of(solr, small_chunks, doc_id)
        assert len(chunks) >= 3 and [c["chunk_index"] for c in chunks] == list(range(len(chunks)))
        expected = chunk_embedder.embed([c["embedded_content"] for c in chunks])
        found = np.array([c["vector_384"] for c in chunks])
        cosines = np.sum(found * expected, axis=1) / np.linalg.norm(found, axis=1)
        assert cosines.min() > 0.9999, (doc_id, cosines)
    hits = solr.get(
        f"{small_chunks.collection_vector}/vector", {"queryrag": SENTENCES[30], "topK": 1, "fl": "parent_doc"}
    )
    assert hits["response"]["docs"][0]["parent_doc"] == "par-2"


@pytest.fixture(scope="module")
def big(solr: SolrClient, settings: Settings) -> Settings:
    """Collections cut in chunks of 50,000 characters (the processor's ``vector.*`` properties);
    64 such chunks take the embedding service longer than its default 30 s on two busy cores."""
    mine = settings.replace(
        collection_main="big_FileShare",
        collection_vector="big_VectorMain",
        vector_chunk_unit="characters",
        vector_chunk_size=50_000,
        embeddings_timeout=300,
    )
    bootstrap(solr, mine)
    user_properties.set_properties(
        solr, mine.collection_main, {"vector.chunksize": "50000", "vector.chunksize.unit": "characters"}
    )
    return mine


def test_a_5_mb_document_is_chunked_and_indexed(solr: SolrClient, big: Settings) -> None:
    paragraph = " ".join(SENTENCES) + "\n\n"
    text = (paragraph * (5_000_000 // len(paragraph) + 1))[:5_000_000]
    [result] = Indexer.of(solr, big).add([{"id": "idx-5mb", "title": "Big", "exactContent": text}], commit=True)
    assert result.status == "ok"
    chunks = chunks_of(solr, big, "idx-5mb")
    assert len(chunks) >= 100 and all(c["has_vector"] for c in chunks)
    assert sum(len(c["embedded_content"]) for c in chunks) >= 0.99 * len(text.strip())


def test_index_command_reads_every_supported_file_type(
    tmp_path: Path, settings: Settings, solr: SolrClient, bootstrapped: BootstrapReport, monkeypatch: pytest.MonkeyPatch
) -> None:
    import docx

    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "a.txt").write_text("Plain text about the cooling tower inspection.")
    (folder / "b.md").write_text("# Heading\n\nMarkdown about the water treatment plant.")
    (folder / "c.html").write_text(
        "<html><head><title>Web page</title><script>x()</script></head>"
        "<body><p>HTML about the boiler room safety rules.</p></body></html>"
    )
    document = docx.Document()
    document.add_paragraph("Word document about the fire alarm drill.")
    document.save(folder / "d.docx")
    (folder / "e.pdf").write_bytes(_tiny_pdf("PDF about the forklift licence."))
    (folder / "f.jsonl").write_text(
        json.dumps({"_id": "beir-1", "title": "BEIR", "text": "A BEIR line of text."}) + "\n"
    )
    (folder / "g.pdf").write_bytes(b"not a pdf at all")
    cli_environment(
        monkeypatch,
        tmp_path / "var",
        settings,
        SOLR_COLLECTION_MAIN=settings.collection_main,
        SOLR_COLLECTION_VECTOR=settings.collection_vector,
        SOLR_EMBEDDINGS_ENDPOINT=settings.agent_url,
    )
    unsaid = CliRunner().invoke(cli, ["index", str(folder)])  # never readable by everyone by accident
    assert unsaid.exit_code == 2 and "Missing option '--visibility'" in unsaid.output, unsaid.output
    wrong = CliRunner().invoke(cli, ["index", "--visibility", "group:", str(folder)])
    assert wrong.exit_code == 2 and "public, group:<token> or user:<name>" in wrong.output, wrong.output
    result = CliRunner().invoke(cli, ["index", "--visibility", "group:plant-staff", str(folder)])
    assert "indexed 6 documents" in result.output and "1 failed" in result.output, result.output
    for collection in (settings.collection_main, settings.collection_vector):
        tokens = solr.get(
            f"{collection}/internal",
            {"q": 'exactContent:"cooling tower" OR exactContent:"BEIR line"', "fl": "allow_token_document"},
        )["response"]["docs"]
        assert len(tokens) >= 2 and all(d["allow_token_document"] == ["plant-staff"] for d in tokens), tokens
    assert "7/7" in result.output  # one progress bar, over documents, with chunks and failures
    assert "failed=1" in result.output and "chunks=" in result.output
    for phrase in ("cooling tower", "water treatment", "boiler room", "fire alarm", "forklift", "BEIR line"):
        hits = solr.get(f"{settings.collection_vector}/internal", {"q": f'exactContent:"{phrase}"', "rows": 1})
        assert hits["response"]["numFound"] >= 1, phrase
    html = solr.get(
        f"{settings.collection_main}/internal", {"q": 'exactContent:"boiler room"', "fl": "title,exactContent"}
    )
    assert html["response"]["docs"][0]["title"] == ["Web page"]  # multi-valued, as Datafari's
    assert "x()" not in html["response"]["docs"][0]["exactContent"]


def _tiny_pdf(text: str) -> bytes:
    """A one-page PDF with ``text`` (written by hand: the format is plain enough)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def test_a_document_sent_without_language_gets_one_and_french_analysis(
    update: Callable[..., dict[str, Any]], solr: SolrClient, small_chunks: Settings
) -> None:
    """Detected at indexing when absent: French text is analysed with the French chain (elision:
    "l'entreprise" is found by "entreprise"); a language that was sent is kept."""
    french = "Les salariés de l'entreprise ont droit à vingt-cinq jours de congés payés chaque année."
    docs = [
        {"id": "idx-lang-fr", "title": "Congés", "exactContent": french},
        {"id": "idx-lang-en", "title": "Leave", "exactContent": " ".join(SENTENCES[:3])},
        {"id": "idx-lang-kept", "title": "Kept", "language": "de", "exactContent": french},
    ]
    assert update(docs, commit="true")["added"] == 3
    languages = {d: parent_of(solr, small_chunks, d)[0].get("language") for d in ("idx-lang-fr", "idx-lang-en")}
    assert languages == {"idx-lang-fr": "fr", "idx-lang-en": "en"}
    assert parent_of(solr, small_chunks, "idx-lang-kept")[0]["language"] == "de"
    query = {"q": "entreprise", "defType": "edismax", "qf": "content_en content_fr", "fl": "id", "rows": 10}
    found = {d["id"] for d in solr.get(f"{small_chunks.collection_main}/internal", query)["response"]["docs"]}
    assert "idx-lang-fr" in found and "idx-lang-kept" not in found  # German text is not analysed as French
