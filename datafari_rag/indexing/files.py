"""Documents from local files for ``datafari-rag index``: text extraction by well-kept libraries.

txt and md as text, html with BeautifulSoup, pdf with pypdf, docx with python-docx, and jsonl in
BEIR format (``_id``, ``title``, ``text``: one document per line).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SUFFIXES = {".txt", ".md", ".html", ".htm", ".pdf", ".docx", ".jsonl"}


class ExtractionError(ValueError):
    """A file whose text cannot be read."""


# A docx is a zip: what it expands to is bounded before it is opened (a 66 kB file can expand to
# gigabytes and take the worker's memory and CPU with it). Office files expand 2-20 times. A
# PDF's compressed streams and its text are bounded by the same figures (_pdf_text).
MAX_EXPANDED_BYTES = 64 * 1024 * 1024
MAX_EXPANSION_RATIO = 100


def check_expansion(path: Path) -> None:
    """Refuses (ExtractionError) a zip-based file that would expand beyond MAX_EXPANDED_BYTES, or
    more than MAX_EXPANSION_RATIO times its size, reading only its directory."""
    try:
        with zipfile.ZipFile(path) as archive:
            expanded = sum(entry.file_size for entry in archive.infolist())
    except zipfile.BadZipFile as exc:
        raise ExtractionError(f"not a valid docx ({exc})") from exc
    size = max(path.stat().st_size, 1)
    if expanded > MAX_EXPANDED_BYTES or expanded > MAX_EXPANSION_RATIO * size:
        raise ExtractionError(
            f"refused: it expands to {expanded:,} bytes ({expanded / size:.0f} times its {size:,} bytes); "
            f"at most {MAX_EXPANDED_BYTES:,} bytes and {MAX_EXPANSION_RATIO} times are read"
        )


def _pdf_text(path: Path) -> tuple[str, str | None]:
    """A PDF's text, bounded like a docx: a compressed stream may expand to at most
    MAX_EXPANDED_BYTES (pypdf's own limit, lowered to ours), and the text of all pages together
    to at most that or MAX_EXPANSION_RATIO times the file's size."""
    import pypdf.filters
    from pypdf import PdfReader
    from pypdf.errors import LimitReachedError

    pypdf.filters.ZLIB_MAX_OUTPUT_LENGTH = min(pypdf.filters.ZLIB_MAX_OUTPUT_LENGTH, MAX_EXPANDED_BYTES)
    bound = min(MAX_EXPANDED_BYTES, MAX_EXPANSION_RATIO * max(path.stat().st_size, 1))
    reader = PdfReader(path)
    title = reader.metadata.title if reader.metadata else None
    pages, total = [], 0
    try:
        for page in reader.pages:
            contents = page.get_contents()  # decoded here: pypdf's text extraction hides the limit
            if contents is not None:
                contents.get_data()
            pages.append(page.extract_text() or "")
            total += len(pages[-1])
            if total > bound:
                raise ExtractionError(f"refused: its text exceeds {bound:,} characters (a compression bomb?)")
    except LimitReachedError as exc:
        raise ExtractionError(f"refused: a stream expands beyond {MAX_EXPANDED_BYTES:,} bytes ({exc})") from exc
    return "\n\n".join(pages), title


def find_files(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
        else:
            found.append(path)
    return found


def _text(path: Path) -> tuple[str, str | None]:
    """(text, title found in the file or None)."""
    suffix = path.suffix.lower()
    if suffix in (".txt", ".md"):
        return path.read_text(encoding="utf-8"), None
    if suffix in (".html", ".htm"):
        from bs4 import BeautifulSoup

        soup = BeautifulSoup(path.read_bytes(), "html.parser")
        for tag in soup(["script", "style", "noscript"]):
            tag.decompose()
        title = soup.title.get_text(strip=True) if soup.title else None
        return soup.get_text("\n", strip=True), title
    if suffix == ".pdf":
        return _pdf_text(path)
    if suffix == ".docx":
        import docx

        check_expansion(path)
        document = docx.Document(str(path))
        return "\n\n".join(p.text for p in document.paragraphs), document.core_properties.title or None
    raise ExtractionError(f"unsupported file type '{suffix}'")


def count_documents(files: list[Path]) -> int:
    """How many documents ``files`` hold (a BEIR jsonl file: one per non-empty line), for a progress bar."""
    total = 0
    for path in files:
        if path.suffix.lower() == ".jsonl":
            with path.open("rb") as fh:
                total += sum(1 for line in fh if line.strip())
        else:
            total += 1
    return total


def _beir_document(path: Path, row: Any) -> dict[str, Any]:
    if not isinstance(row, dict) or "_id" not in row:
        raise ValueError("a BEIR record is a JSON object with an '_id'")
    return {
        "id": str(row["_id"]),
        "title": row.get("title") or str(row["_id"]),
        "url": f"{path.name}#{row['_id']}",
        "source": path.stem,
        "extension": "jsonl",
        "exactContent": row.get("text", ""),
    }


def all_documents(files: list[Path]) -> Iterator[dict[str, Any] | ExtractionError]:
    """The documents of every file, in order; a file or a line that cannot be read comes as an
    :class:`ExtractionError` naming it, in its place, and the rest goes on."""
    for path in files:
        try:
            if path.suffix.lower() == ".jsonl":
                with path.open(encoding="utf-8") as fh:
                    for number, line in enumerate(fh, 1):
                        if line.strip():
                            try:
                                yield _beir_document(path, json.loads(line))
                            except ValueError as exc:
                                yield ExtractionError(f"{path}:{number}: {exc}")
            else:
                yield file_document(path)
        except (ExtractionError, OSError, UnicodeDecodeError) as exc:
            yield ExtractionError(f"{path}: {exc}")


def file_document(path: Path) -> dict[str, Any]:
    """The FileShare document of one file that is not jsonl."""
    try:
        text, title = _text(path)
    except ExtractionError:
        raise
    except Exception as exc:  # a damaged file: reported for that file only
        raise ExtractionError(f"unreadable ({exc})") from exc
    modified = datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    url = path.resolve().as_uri()
    return {
        "id": url,
        "title": title or path.stem,
        "url": url,
        "source": "files",
        "extension": path.suffix.lower().lstrip("."),
        "last_modified": modified,
        "exactContent": text,
    }
