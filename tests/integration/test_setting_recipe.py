"""CONTRIBUTING.md's "Add a setting", followed on a copy of the package: one field in its section's
module — and the file and the environment set it, its bounds are checked, the generated files
list it, administrators may change it at run time, and its section's part carries it. No other
file is touched. (A process of its own reads the copy: the integration tier.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import datafari_rag

pytestmark = pytest.mark.integration

FIELD = """    rerank_min_score: float = key(
        QUALITY, "rerank.minScore", 0.0, "Reranked passages scoring below this are dropped.", maximum=1
    )
"""

CHECKS = """
from pathlib import Path
from datafari_rag.config import ConfigError, load_settings
from datafari_rag.config.quality import QualitySettings
from datafari_rag.config_docs import render_markdown, render_properties
from datafari_rag.live import live_key

nowhere = Path("/nonexistent/rag.properties")
settings = load_settings(nowhere, {"DATAFARI_RAG_RERANK_MINSCORE": "0.4"})
assert settings.rerank_min_score == 0.4 and settings.part(QualitySettings).rerank_min_score == 0.4
try:
    load_settings(nowhere, {"DATAFARI_RAG_RERANK_MINSCORE": "2"})
    raise SystemExit("a value above the maximum was taken")
except ConfigError as exc:
    assert "rerank.minScore" in str(exc) and "at most 1" in str(exc), exc
assert "rerank.minScore=0" in render_properties().splitlines() and "`rerank.minScore`" in render_markdown()
assert live_key("rerank.minScore")
print("followed")
"""


def test_a_new_setting_is_one_field_in_its_section_module(tmp_path: Path) -> None:
    copy = tmp_path / "datafari_rag"
    shutil.copytree(Path(datafari_rag.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    section = copy / "config" / "quality.py"
    text = section.read_text(encoding="utf-8")
    anchor = '    """Reranking, query enhancement, context assembly, strategies'
    start = text.index(anchor)
    end = text.index("\n\n", start) + 2  # after the class's docstring
    section.write_text(text[:end] + FIELD + text[end:], encoding="utf-8")  # step 1, the only edit
    # -S: without the site hooks (the editable install's finder would import the checkout's package),
    # the libraries from site-packages named on the path after the copy
    libraries = os.pathsep.join(p for p in sys.path if p.endswith("site-packages"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), libraries])}
    command = [sys.executable, "-S", "-c", CHECKS]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "followed", done.stderr[-3000:]
