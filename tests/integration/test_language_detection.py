"""FileShare's language step in Solr: every writer's documents get a language, by the sidecar's
rules (``datafari_rag/text/language.py``), and French ones the French analysis chain."""

from __future__ import annotations

import json
from typing import Any

import pytest

from datafari_rag.config import Settings
from datafari_rag.paths import SAMPLE_CORPUS
from datafari_rag.retrieval.hybrid import FRENCH_SPARSE
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.text.language import detect

FRENCH = [
    "Les salariés de l'entreprise ont droit à vingt-cinq jours de congés payés chaque année.",
    "Le conseil d'administration se réunit chaque trimestre pour examiner les comptes de la société.",
    "La Révolution française a profondément transformé les institutions politiques du pays.",
    "Les chevaux de la vallée sont nourris chaque matin par les éleveurs du village voisin.",
    "Le télétravail est autorisé trois jours par semaine avec l'accord du responsable hiérarchique.",
    "La photosynthèse permet aux plantes de transformer la lumière du soleil en énergie chimique.",
    "Les dépenses des ménages représentent plus de la moitié des montants consacrés au sport.",
    "Il faut signaler tout incident de sécurité informatique au service compétent dans l'heure.",
    "La cathédrale fut reconstruite au XIIIe siècle après un incendie qui détruisit la nef.",
    "Les notes de frais doivent être accompagnées des justificatifs originaux et validées.",
]
UNSURE = ["Pump 12: 3.5 bar, 40 °C.", "OK", "2026-01-10 09:00 #42 (x3)"]


@pytest.fixture(scope="module")
def labelled(solr: SolrClient, settings: Settings) -> tuple[Settings, dict[str, str]]:
    """Documents written straight to FileShare (no sidecar), chunking off: what Solr labelled."""
    mine = settings.replace(collection_main="lang_FileShare", collection_vector="lang_VectorMain", vector_enabled=False)
    bootstrap(solr, mine)
    texts = {f"fr-{i}": t for i, t in enumerate(FRENCH)} | {f"unsure-{i}": t for i, t in enumerate(UNSURE)}
    with SAMPLE_CORPUS.open(encoding="utf-8") as fh:
        sample = [json.loads(line) for line in fh]
    texts |= {f"sample-{i}": d["text"] for i, d in enumerate(sample)}
    declared = {f"sample-{i}": d["language"] for i, d in enumerate(sample)}
    docs: list[dict[str, Any]] = [{"id": k, "title": k, "exactContent": v} for k, v in texts.items()]
    solr.post(f"{mine.collection_main}/update", json=docs, params={"commit": "true"})
    found = solr.get(f"{mine.collection_main}/internal", {"q": "*:*", "fl": "id,language", "rows": 1000})
    got = {d["id"]: d.get("language") for d in found["response"]["docs"]}
    assert set(got) == set(texts)
    return mine, {k: got[k] for k in texts} | {f"text:{k}": v for k, v in texts.items()} | {
        f"declared:{k}": v for k, v in declared.items()
    }


def test_solr_labels_every_document_as_the_sidecars_rules_do(labelled: tuple[Settings, dict[str, Any]]) -> None:
    _, got = labelled
    ids = [k for k in got if ":" not in k]
    pairs = {k: (got[k], detect(got[f"text:{k}"])) for k in ids}
    conflicts = {k: p for k, p in pairs.items() if None not in p and p[0] != p[1]}
    assert not conflicts, f"Solr's label against the sidecar's: {conflicts}"
    # two detectors near the confidence bar: one may abstain where the other labels (the sample's
    # cafeteria notice: py3langid 0.899 'en'); never more than one document in twenty
    abstained = {k: p for k, p in pairs.items() if p[0] != p[1]}
    assert len(abstained) * 20 <= len(ids), abstained
    assert all(got[f"fr-{i}"] == "fr" for i in range(len(FRENCH)))
    assert all(got[f"unsure-{i}"] is None for i in range(len(UNSURE)))
    # the sample corpus, English and French, as its authors declared it
    wrong = {k: got[k] for k in ids if k.startswith("sample-") and got[k] != got[f"declared:{k}"]}
    assert not wrong, wrong


def test_a_french_document_is_searched_with_the_french_chain(
    solr: SolrClient, labelled: tuple[Settings, dict[str, Any]]
) -> None:
    """ "entreprise" finds "l'entreprise" (elision) and "cheval" finds "chevaux" only in French."""
    mine, _ = labelled
    for word, expected in (("entreprise", "fr-0"), ("cheval", "fr-3")):
        query = {"q": word, "defType": "edismax", "qf": "content_fr", "fl": "id", "rows": 10}
        found = {d["id"] for d in solr.get(f"{mine.collection_main}/internal", query)["response"]["docs"]}
        assert expected in found


def test_a_french_text_holding_the_question_s_words_close_together_ranks_first(
    solr: SolrClient, labelled: tuple[Settings, dict[str, Any]]
) -> None:
    """The same words, as often, in texts of the same length: the one where the question's words
    stand within 20 positions of each other comes first (FileShare's ``pf``/``ps``, and the
    hybrid's French BM25 arm), though it was written last, which would break the tie otherwise."""
    mine, _ = labelled
    filler = " ".join(["Les habitants de la commune votent chaque printemps pour leurs représentants."] * 4)
    near = f"Le tribunal administratif examine le recours déposé par la mairie. {filler}"
    far = f"Le tribunal examine le recours déposé par la mairie. {filler} Administratif."
    docs = [
        {"id": "prox-far", "title": "Recours", "exactContent": far},
        {"id": "prox-near", "title": "Recours", "exactContent": near},
    ]
    solr.post(f"{mine.collection_main}/update", json=docs, params={"commit": "true"})
    query = {"q": "tribunal administratif", "fq": "id:prox-*", "fl": "id,language,score"}
    plain = {**query, "defType": "edismax", "qf": "content_fr"}
    tied = solr.get(f"{mine.collection_main}/internal", plain)["response"]["docs"]
    assert [d["language"] for d in tied] == ["fr", "fr"] and tied[0]["score"] == tied[1]["score"]
    by_default = solr.get(f"{mine.collection_main}/select", query)["response"]["docs"]
    hybrid_arm = solr.get(f"{mine.collection_main}/internal", {**query, "defType": "edismax", **dict(FRENCH_SPARSE)})
    assert [d["id"] for d in by_default] == ["prox-near", "prox-far"]
    assert [d["id"] for d in hybrid_arm["response"]["docs"]] == ["prox-near", "prox-far"]
