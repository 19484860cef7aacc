"""Documents from local files: one per file, one per line of a BEIR jsonl file; bad ones named."""

from __future__ import annotations

import json
from pathlib import Path

from datafari_rag.indexing.files import ExtractionError, all_documents, count_documents, find_files


def test_a_bad_line_is_named_and_the_rest_of_the_file_goes_on(tmp_path: Path) -> None:
    lines = [json.dumps({"_id": "1", "text": "one"}), "{not json", json.dumps(["no", "id"]), "", json.dumps({"_id": 4})]
    (tmp_path / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "note.txt").write_text("A note.")
    (tmp_path / "broken.pdf").write_bytes(b"not a pdf")
    files = find_files([tmp_path])
    out = list(all_documents(files))
    errors = [str(x) for x in out if isinstance(x, ExtractionError)]
    docs = [x for x in out if not isinstance(x, ExtractionError)]
    assert [d["id"] for d in docs if d["extension"] == "jsonl"] == ["1", "4"]
    assert any(d["exactContent"] == "A note." for d in docs)
    assert any("corpus.jsonl:2:" in e for e in errors) and any("corpus.jsonl:3:" in e for e in errors)
    assert any("broken.pdf" in e for e in errors)
    assert count_documents(files) == len(out) == 6  # the progress bar's total: one per document


def test_a_docx_that_expands_too_far_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    """A zip bomb dressed as a docx (66 kB that expand to 38 MB took a worker's memory and CPU):
    refused, named, reading only the archive's directory; a real docx goes through."""
    import zipfile

    import docx

    bomb = tmp_path / "bomb.docx"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", "<w:t>" + "a" * (38 * 1024 * 1024) + "</w:t>")
    real = tmp_path / "real.docx"
    document = docx.Document()
    document.add_paragraph("The pump is serviced every spring.")
    document.core_properties.title = "Pump"
    document.save(str(real))
    out = list(all_documents([bomb, real]))
    assert bomb.stat().st_size < 200_000
    assert isinstance(out[0], ExtractionError) and "bomb.docx" in str(out[0]) and "expands to" in str(out[0])
    assert not isinstance(out[1], ExtractionError) and out[1]["exactContent"] == "The pump is serviced every spring."


def _pdf(content: bytes) -> bytes:
    """A one-page PDF whose content stream is ``content``, Flate-compressed."""
    import zlib

    data = zlib.compress(content, 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def test_a_pdf_whose_stream_expands_too_far_is_refused(tmp_path: Path) -> None:
    """A compression bomb dressed as a PDF: a stream of 80 MB in about 80 kB is refused, named; a
    PDF of the same make with a real page goes through."""
    bomb = tmp_path / "bomb.pdf"
    bomb.write_bytes(_pdf(b" " * (80 * 1024 * 1024)))
    real = tmp_path / "real.pdf"
    real.write_bytes(_pdf(b"BT /F1 12 Tf 72 720 Td (The pump is serviced every spring.) Tj ET"))
    out = list(all_documents([bomb, real]))
    assert bomb.stat().st_size < 200_000
    assert isinstance(out[0], ExtractionError) and "bomb.pdf" in str(out[0]) and "expands beyond" in str(out[0])
    assert not isinstance(out[1], ExtractionError) and "pump is serviced" in out[1]["exactContent"]
