"""DatafariUI's search page in chromium: it starts (no licence dialog), searches, filters with a
facet and pages, on the sidecar and the real Solr, as the user a single sign-on names. Screenshots
go to ``var/e2e/screenshots/``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Download, Locator, Page, expect, sync_playwright

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.paths import var_dir
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.servers import serve
from datafari_rag.testing.ui_origin import ui_origin
from tests.e2e.conftest import CHROMIUM
from tests.integration.conftest import mapped_users

SOURCES = ("Intranet", "Share")
# 28 documents: 22 public, 6 for team-hr only (hana's team); sources alternate
DOCS = [
    {
        "id": f"e2e-{i}",
        "title": f"Pump maintenance report {i}",
        "url": f"file://share/reports/pump-{i}.pdf",
        "extension": "pdf" if i % 3 else "docx",
        "repo_source": SOURCES[i % 2],
        "author": ["alice" if i % 2 else "bob"],
        "exactContent": f"Report {i}: the cooling pump was inspected, its seals replaced and its pressure logged.",
        **({"allow_token_document": ["team-hr"]} if i >= 22 else {}),
    }
    for i in range(28)
]
SHOTS = var_dir() / "e2e" / "screenshots"


@pytest.fixture(scope="module")
def origin(
    solr: SolrClient, settings: Settings, datafariui_build: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, str]]:
    """DatafariUI's origin as hana (named by the single sign-on) and as an anonymous visitor."""
    folder = tmp_path_factory.mktemp("e2e")
    mine = mapped_users(settings, folder, "e2e", {"hana": ["team-hr"]})
    bootstrap(solr, mine)
    indexer = Indexer.of(solr, mine)
    indexer.delete_query("*:*", commit=True)
    assert all(r.status == "ok" for r in indexer.add(DOCS, commit=True))
    with (
        serve(create_app(mine)) as sidecar,
        serve(ui_origin(datafariui_build, sidecar, user="hana")) as hana,
        serve(ui_origin(datafariui_build, sidecar)) as anonymous,
    ):
        yield {"hana": hana, "anonymous": anonymous}


@pytest.fixture
def page() -> Iterator[Page]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        yield page
        browser.close()
        assert errors == [], errors  # no uncaught exception in the UI


def facet_checkbox(page: Page, value: str) -> Locator:
    label = page.locator("span", has_text=re.compile(f"^{re.escape(value)}$")).first
    return label.locator("xpath=..").locator("input[type=checkbox]")


def search_for(page: Page, origin: str, text: str) -> None:
    page.goto(f"{origin}/datafariui/")
    search = page.locator("input[aria-label=search]")
    expect(search).to_be_visible(timeout=60_000)
    expect(page.get_by_text(re.compile("licence", re.I))).to_have_count(0)  # no "Licence issue" dialog
    search.fill(text)
    search.press("Enter")


def test_search_facet_and_pages_in_datafariui(origin: dict[str, str], page: Page) -> None:
    search_for(page, origin["hana"], "pump")
    # hana reads all 28 (6 through her team's token)
    expect(page.get_by_text("Results 1 - 10 of 28")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Pump maintenance report").filter(visible=True).first).to_be_visible()
    page.screenshot(path=str(SHOTS / "1-search.png"), full_page=True)

    intranet = sum(1 for d in DOCS if d["repo_source"] == "Intranet")
    facet_checkbox(page, "Intranet").check()
    expect(page.get_by_text(f"Results 1 - 10 of {intranet}")).to_be_visible(timeout=30_000)
    page.screenshot(path=str(SHOTS / "2-facet-intranet.png"), full_page=True)

    page.get_by_label("Next page").click()
    expect(page.get_by_text(f"Results 11 - {min(20, intranet)} of {intranet}")).to_be_visible(timeout=30_000)
    page.screenshot(path=str(SHOTS / "3-page-2.png"), full_page=True)


def test_an_anonymous_visitor_sees_and_counts_public_documents_only(origin: dict[str, str], page: Page) -> None:
    search_for(page, origin["anonymous"], "pump")
    expect(page.get_by_text("Results 1 - 10 of 22")).to_be_visible(timeout=30_000)
    public = [d for d in DOCS if "allow_token_document" not in d]
    for source in SOURCES:  # the facet counts only what the visitor may read
        count = sum(1 for d in public if d["repo_source"] == source)
        expect(facet_checkbox(page, source).locator("xpath=../../..")).to_contain_text(str(count))
    page.get_by_text("3", exact=True).click()  # the last page: two public reports, no team-hr one
    expect(page.get_by_text("Results 21 - 22 of 22")).to_be_visible(timeout=30_000)
    expect(page.get_by_text(re.compile(r"Pump maintenance report 2[2-7]$"))).to_have_count(0)
    page.screenshot(path=str(SHOTS / "4-anonymous-last-page.png"), full_page=True)


def search_tools(page: Page, item: str) -> None:
    page.get_by_role("button", name="Search Tools").click()
    page.get_by_role("menuitem", name=item).click()


def results(page: Page, count: int) -> None:
    expect(page.get_by_text(f"Results 1 - 10 of {count}")).to_be_visible(timeout=30_000)


def test_a_named_user_stays_a_minute_without_the_connection_lost_dialog(origin: dict[str, str], page: Page) -> None:
    checks: list[int] = []
    page.on("response", lambda r: checks.append(r.status) if r.url.endswith("/RefreshSession") else None)
    search_for(page, origin["hana"], "pump")
    results(page, 28)
    page.wait_for_timeout(62_000)  # DatafariUI checks the session every 15 s
    assert len(checks) >= 3 and set(checks) == {200}, checks
    expect(page.get_by_text(re.compile("Connection is lost", re.I))).to_have_count(0)
    page.screenshot(path=str(SHOTS / "5-a-minute-later.png"), full_page=True)


def test_a_result_opens_in_preview_and_as_the_document(origin: dict[str, str], page: Page) -> None:
    search_for(page, origin["hana"], "pump")
    results(page, 28)
    title = page.get_by_role("link", name=re.compile("Pump maintenance report")).first
    href = title.get_attribute("href") or ""
    assert href.startswith("/Datafari/URL?id=e2e-"), href
    page.get_by_text("Open preview").first.click()
    expect(page.get_by_text(re.compile("its seals replaced")).first).to_be_visible(timeout=30_000)
    page.screenshot(path=str(SHOTS / "6-preview.png"), full_page=True)
    page.goto(origin["hana"] + href)  # the file:// document: the text the index keeps
    expect(page.get_by_text(re.compile(r"Report \d+: the cooling pump"))).to_be_visible(timeout=30_000)
    page.screenshot(path=str(SHOTS / "7-document.png"), full_page=True)


def test_the_advanced_search_offers_the_fields(origin: dict[str, str], page: Page) -> None:
    search_for(page, origin["hana"], "pump")
    results(page, 28)
    search_tools(page, "Advanced Search")
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_text("Add a search field")).to_be_visible(timeout=30_000)
    dialog.get_by_text("Add a search field").click()
    dialog.locator("[aria-haspopup=listbox]").last.click()  # the new line's field list: the schema's fields
    options = page.get_by_role("option")
    expect(options.filter(has_text=re.compile("^author$", re.I))).to_have_count(1, timeout=30_000)
    page.screenshot(path=str(SHOTS / "8-advanced-search.png"), full_page=True)
    names = options.all_inner_texts()
    assert "last_modified" in names and not [n for n in names if "token" in n or n.startswith("_")], names


def test_a_typo_is_searched_as_the_spelling_that_finds_documents(origin: dict[str, str], page: Page) -> None:
    search_for(page, origin["hana"], "pmup")
    results(page, 28)  # DatafariUI searched the suggestion at once
    expect(page.get_by_text(re.compile("No results were found for"))).to_be_visible()
    page.screenshot(path=str(SHOTS / "9-did-you-mean.png"), full_page=True)


def test_a_query_and_an_alert_are_saved_and_listed(origin: dict[str, str], page: Page) -> None:
    search_for(page, origin["hana"], "pump")
    results(page, 28)
    search_tools(page, "Save Current Query")
    page.get_by_role("button", name="Save This Query").click()
    expect(page.get_by_role("dialog")).to_have_count(0, timeout=30_000)
    search_tools(page, "Manage Saved Queries")
    expect(page.get_by_role("dialog").get_by_text("pump").first).to_be_visible(timeout=30_000)
    page.screenshot(path=str(SHOTS / "10-saved-queries.png"), full_page=True)
    page.keyboard.press("Escape")
    search_tools(page, "Save Query As Alert")
    page.get_by_role("button", name="Activate this alert").click()
    expect(page.get_by_role("dialog")).to_have_count(0, timeout=30_000)
    search_tools(page, "Manage Alerts")
    expect(page.get_by_role("dialog").get_by_text("pump").first).to_be_visible(timeout=30_000)
    page.screenshot(path=str(SHOTS / "11-alerts.png"), full_page=True)


def test_the_results_are_exported(origin: dict[str, str], page: Page) -> None:
    search_for(page, origin["hana"], "pump")
    results(page, 28)
    search_tools(page, "Export search results list")
    page.screenshot(path=str(SHOTS / "12-export.png"), full_page=True)
    downloads: list[Download] = []  # DatafariUI opens the file in a new tab (target _blank)
    page.context.on("page", lambda tab: tab.on("download", lambda d: downloads.append(d)))
    page.on("download", lambda d: downloads.append(d))  # or, as Chromium does it, in the page itself
    page.get_by_role("button", name="Generate Export File").click()
    for _ in range(60):
        if downloads:
            break
        page.wait_for_timeout(500)
    assert downloads, "no file was downloaded"
    assert downloads[0].suggested_filename == "results.xlsx"
    saved = downloads[0].path()
    assert saved is not None and Path(saved).read_bytes()[:2] == b"PK"  # an xlsx is a zip


def test_french_is_kept_after_a_reload(origin: dict[str, str], page: Page) -> None:
    search_for(page, origin["hana"], "pump")
    results(page, 28)
    page.get_by_role("button", name="Language selection").click()
    with page.expect_response(lambda r: r.url.endswith("/users/current") and r.request.method == "PUT"):
        page.get_by_role("menuitem", name="French").click()
    page.reload()
    expect(page.get_by_role("button", name="Outils de recherche")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("Résultats 1 - 10 sur 28")).to_be_visible(timeout=30_000)
    page.screenshot(path=str(SHOTS / "13-french-after-reload.png"), full_page=True)
    page.get_by_role("button", name="Choix de la langue").click()  # back to English for the next runs
    page.get_by_role("menuitem", name="Anglais").click()
