"""The chunk documents' field names live in one file, ``datafari_rag/chunk_fields.json`` (package
data, copied into the plugin's jar at build), read by the Java processor that writes the chunks and
by the sidecar that reads them: no copy elsewhere."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from datafari_rag import chunk_fields
from datafari_rag.paths import CONFIGSETS, SOLR_PLUGIN

NAMES = [
    chunk_fields.PARENT,
    chunk_fields.INDEX,
    chunk_fields.COUNT,
    chunk_fields.PARENT_VERSION,
    chunk_fields.TEXT,
    chunk_fields.FULL_TEXT,
    chunk_fields.HAS_VECTOR,
    chunk_fields.FRENCH_TEXT,
    chunk_fields.FRENCH_TITLE,
]


def schema_fields(collection: str) -> set[str]:
    root = ET.parse(CONFIGSETS / collection / "conf" / "managed-schema.xml").getroot()
    return {f.attrib["name"] for f in root.iter("field")}


def test_vectormain_declares_every_field_a_chunk_gets() -> None:
    assert set(NAMES) <= schema_fields("VectorMain")


def test_the_field_that_carries_given_chunks_is_never_a_field_of_fileshare() -> None:
    """The processor takes it off the parent: a schema field would store it."""
    assert chunk_fields.GIVEN_CHUNKS not in schema_fields("FileShare")


def test_a_chunk_never_copies_its_parents_text_vectors_or_bookkeeping() -> None:
    assert {
        chunk_fields.FULL_TEXT,
        chunk_fields.TEXT,
        "id",
        "_version_",
        chunk_fields.PARENT,
    } <= chunk_fields.NOT_COPIED
    assert "content_en".startswith(chunk_fields.NOT_COPIED_PREFIXES)
    assert "vector_384".startswith(chunk_fields.NOT_COPIED_PREFIXES)
    assert "title" not in chunk_fields.NOT_COPIED and "allow_token_document" not in chunk_fields.NOT_COPIED


def _literals(files: list[Path]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for file in files:
        for name in re.findall(r'"([a-z_]+)"', file.read_text(encoding="utf-8")):
            if name in [*NAMES[:5], chunk_fields.HAS_VECTOR, chunk_fields.GIVEN_CHUNKS]:
                found.setdefault(name, []).append(file.name)
    return found


def test_the_java_writer_names_chunk_fields_only_through_the_shared_file() -> None:
    sources = sorted((SOLR_PLUGIN / "src" / "main" / "java").rglob("*.java"))
    assert _literals(sources) == {}


def test_the_sidecars_code_names_chunk_fields_only_through_the_shared_file() -> None:
    package = Path(chunk_fields.__file__).parent
    sources = [p for p in package.rglob("*.py") if p.name != "chunk_fields.py"]
    assert _literals(sources) == {}
