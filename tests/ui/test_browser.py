"""The web UI in chromium: sign in, ask, see the answer stream in with its citations, reopen the
conversation, summarize a source, switch to French; change a setting on the admin page and see
the next answer follow it; create a workflow, make its API key and query it; manage users; read
the token statistics. Every control has a label, every request stays on the sidecar's origin."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient
from datafari_rag.store import StoreHandle
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.servers import serve
from tests.integration.conftest import MEMO as BOARD_MEMO
from tests.integration.conftest import PASSWORD, signed_in_world
from tests.ui.conftest import shot

MEMO = BOARD_MEMO["id"]
# a citation of a document with no web address opens its preview, read with the user's access
OPENS_MEMO = re.compile(r"^/Datafari/URL\?id=file%3A%2F%2Fshare%2Fboard%2Fpay\.txt(&passage=.+)?$")
ANSWER = "The board pay memo says salaries rise by 3 percent [1]."
SUMMARY = "A memo of the board on pay: salaries rise by 3 percent."


def reply(prompt: str) -> str:
    return SUMMARY if "Task: summarize" in prompt else ANSWER


@pytest.fixture(scope="module")
def world(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    users = {"bea": False, "root": True}
    return signed_in_world(solr, settings, tmp_path_factory.mktemp("ui"), "ui", users, max_files=1, update_users="root")


@pytest.fixture
def sidecar(world: Settings, fake_llm: FakeLlm, fake_llm_server: tuple[FakeLlm, str]) -> Iterator[str]:
    fake_llm.answer = reply
    fake_llm.chunk_delay = 0.05  # the answer comes in pieces the page shows as they come
    with serve(create_app(world.replace(llm_endpoint=fake_llm_server[1]))) as url:
        yield url


def sign_in(page: Page, base: str, username: str) -> None:
    page.goto(f"{base}/ui/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("navigation", name="Main")).to_be_visible()


def ask(page: Page, question: str) -> None:
    page.get_by_label("Your question").fill(question)
    page.get_by_role("button", name="Send").click()


def requests_of(page: Page) -> list[str]:
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    return seen


def test_sign_in_ask_see_the_streamed_answer_and_reopen_the_conversation(
    page: Page, sidecar: str, fake_llm: FakeLlm
) -> None:
    seen = requests_of(page)
    page.goto(f"{sidecar}/ui/")
    # a wrong password: said in the page, nothing else happens
    page.get_by_label("Username").fill("bea")
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("wrong")
    shot(page, "0-sign-in-refused")
    sign_in(page, sidecar, "bea")
    ask(page, "What does the board pay memo say about salaries?")
    answer = page.locator(".turn .answer").last
    expect(answer).to_contain_text("salaries rise by 3 percent")
    citation = answer.locator("a.cite")
    expect(citation).to_have_text("1")
    expect(citation).to_have_attribute("href", OPENS_MEMO)
    citation.click()  # the document opens in the page, the cited passage highlighted
    opened = page.get_by_role("dialog", name="Board pay memo")
    expect(opened.locator("mark")).to_have_text("The board pay memo: salaries rise by 3 percent.")
    shot(page, "22-citation-opens-the-document")
    opened.get_by_role("button", name="Close").click()
    expect(opened).to_have_count(0)
    assert page.locator('a[href^="file:"], a[href^="javascript:"], a[href^="upload:"]').count() == 0
    sources = page.get_by_role("region", name="Sources")
    expect(sources.get_by_role("link", name="Board pay memo")).to_have_attribute("href", OPENS_MEMO)
    assert fake_llm.streams_completed >= 1  # the answer came through the streaming call
    shot(page, "1-chat-answer-with-citation")
    # summarize the source
    sources.get_by_role("button", name="Summarize: Board pay memo").click()
    expect(sources.locator(".summary")).to_have_text(SUMMARY)
    # the conversation is kept: a new page, the list, then the conversation with its citation
    conversation = page.get_by_role("complementary", name="Conversations").get_by_role("link").first
    expect(conversation).to_have_text("What does the board pay memo say about salaries?")
    page.goto(f"{sidecar}/ui/#/usage")
    page.goto(f"{sidecar}/ui/#/chat")
    page.get_by_role("complementary", name="Conversations").get_by_role("link").first.click()
    expect(page.locator(".turn .question")).to_have_text(["What does the board pay memo say about salaries?"])
    expect(page.locator(".turn .answer a.cite")).to_have_attribute("href", OPENS_MEMO)
    shot(page, "2-conversation-reopened")
    # rename it (the browser's prompt), then it is listed under its new name
    page.once("dialog", lambda dialog: dialog.accept("Board pay"))
    page.get_by_role("button", name=re.compile("^Rename: ")).first.click()
    expect(page.get_by_role("complementary", name="Conversations").get_by_role("link").first).to_have_text("Board pay")
    # French: the page's words and the answer's language
    page.get_by_label("Language").select_option("fr")
    expect(page.get_by_label("Votre question")).to_be_visible()
    expect(page.get_by_role("button", name="Envoyer")).to_be_visible()
    page.get_by_label("Votre question").fill("Que dit la note sur les salaires ?")
    page.get_by_role("button", name="Envoyer").click()
    expect(page.locator(".turn .answer").last).to_contain_text("3 percent")
    assert "Write the answer in French." in fake_llm.messages()[-1][0]["content"]
    shot(page, "3-chat-in-french")
    # token statistics of these answers
    page.get_by_role("link", name="Statistiques de jetons").click()
    expect(page.locator("table.usage tbody tr")).not_to_have_count(0)
    expect(page.locator("table.usage tfoot")).to_contain_text(re.compile(r"\d"))
    shot(page, "4-token-statistics")
    # delete the conversation (after the browser's confirmation): gone from the list and the store
    page.get_by_role("link", name="Discussion").click()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Supprimer: Board pay").click()
    expect(page.get_by_role("complementary", name="Conversations").get_by_role("link", name="Board pay")).to_have_count(
        0
    )
    origins = {re.match(r"^[a-z]+://[^/]+", url).group(0) for url in seen}  # type: ignore[union-attr]
    assert origins == {sidecar}, origins  # no CDN: every file and call from the sidecar


def test_a_setting_changed_on_the_admin_page_takes_effect_and_secrets_stay_hidden(
    page: Page, sidecar: str, world: Settings, fake_llm: FakeLlm
) -> None:
    sign_in(page, sidecar, "root")
    page.get_by_role("link", name="RAG & AI configuration").click()
    instructions = page.get_by_label("prompt.instructions", exact=True)
    expect(instructions).to_be_editable()
    expect(page.get_by_label("solr.url", exact=True)).to_be_disabled()
    assert world.jwt_hs256_secret not in page.content()
    expect(page.get_by_label("security.jwt.hs256.secret", exact=True)).to_have_value("")
    # a bad value: the reason in the page, nothing saved
    temperature = page.get_by_label("llm.temperature", exact=True)
    original = temperature.input_value()
    page.get_by_label("Find a key").fill("temperature")  # the other keys are hidden, not lost
    expect(page.get_by_label("llm.model", exact=True)).to_be_hidden()
    temperature.fill("-3")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("alert")).to_contain_text("llm.temperature")
    shot(page, "5-settings-refused")
    temperature.fill(original)
    page.get_by_label("Find a key").fill("prompt instructions")
    instructions.fill("Close every answer with: Kind regards, the help desk.")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status").filter(has_text="applied without restart")).to_be_visible()
    page.get_by_label("Find a key").fill("prompt.instructions")
    expect(page.get_by_label("prompt.instructions", exact=True)).to_have_value(
        "Close every answer with: Kind regards, the help desk."
    )
    shot(page, "6-settings-saved")
    page.get_by_role("link", name="Chat").click()
    ask(page, "How many days of paid annual leave?")  # root holds no token: a public document
    expect(page.locator(".turn .answer").last).to_contain_text("3 percent")
    assert "Kind regards, the help desk." in fake_llm.messages()[-1][0]["content"]
    # back to the file's value
    page.get_by_role("link", name="RAG & AI configuration").click()
    page.get_by_role("checkbox", name="Back to the file's value: prompt.instructions").check()
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_label("prompt.instructions", exact=True)).to_have_value("")


def test_create_a_workflow_make_its_key_and_query_it(page: Page, sidecar: str, fake_llm: FakeLlm) -> None:
    sign_in(page, sidecar, "root")
    page.get_by_role("link", name="Workflows").click()
    expect(page.get_by_text("No workflow yet: ai/rag runs the RAG & AI configuration.")).to_be_visible()
    page.get_by_role("button", name="Create").click()
    form = page.get_by_role("form", name="Create")
    # the form is the model's (workflows/spec.py): its defaults and bounds
    expect(form.get_by_label("Max chunk size (characters)")).to_have_attribute("max", "8000")
    expect(form.get_by_label("Max chunk size (characters)")).to_have_value("600")
    expect(form.get_by_label("Retrieval", exact=True)).to_have_value("bm25")
    form.get_by_label("Name", exact=True).fill("Board desk")
    form.get_by_label("Instructions added to the prompt").fill("Answer for the board's secretary.")
    form.get_by_label("Chunker", exact=True).select_option("proposition")
    form.get_by_label("LLM evaluator (drops poor chunks)").check()
    form.get_by_label('Source filters (JSON, e.g. {"extension": ["pdf"]})').fill('{"colour": ["blue"]}')
    form.get_by_role("button", name="Save").click()
    expect(form.get_by_role("alert")).to_contain_text("filters")  # refused, with why
    form.get_by_label('Source filters (JSON, e.g. {"extension": ["pdf"]})').fill("")
    form.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status").filter(has_text="Workflow saved.")).to_be_visible()
    expect(page.get_by_role("row", name=re.compile("Board desk"))).to_be_visible()
    expect(page.get_by_text("No workflow yet")).to_have_count(0)
    keys = page.get_by_role("region", name="API keys: Board desk")
    keys.get_by_label("What the key is for").fill("intranet")
    keys.get_by_label("Acts as user (empty: me)").fill("bea")
    keys.get_by_role("button", name="New API key").click()
    secret = keys.locator("output.new-key")
    expect(secret).to_have_text(re.compile(r"^dfr_"))
    key = secret.inner_text()
    shot(page, "7-workflow-key-shown-once")
    keys.get_by_label("Your question").fill("What does the board pay memo say?")
    keys.get_by_role("button", name="Ask").click()
    expect(keys.locator(".answer")).to_contain_text("3 percent")
    # a file:// source is named, never a link's target (the try-out's key is not the page's identity)
    expect(keys.locator(".answer li")).to_contain_text(f"Board pay memo ({MEMO})")
    assert keys.locator(".answer a").count() == 0
    assert "Answer for the board's secretary." in fake_llm.messages()[-1][0]["content"]
    shot(page, "8-workflow-queried-with-its-key")
    # the key is never shown again; revoked, it is refused
    page.reload()
    page.get_by_role("button", name="Edit: Board desk").click()
    assert key not in page.content()
    form = page.get_by_role("form", name="Edit: Board desk")
    expect(form.get_by_label("Chunker", exact=True)).to_have_value("proposition")
    expect(form.get_by_label("LLM evaluator (drops poor chunks)")).to_be_checked()
    keys = page.get_by_role("region", name="API keys: Board desk")
    keys.get_by_role("button", name=re.compile("^Revoke: ")).click()
    expect(keys).to_contain_text("revoked")
    keys.get_by_label("API key", exact=True).fill(key)
    keys.get_by_label("Your question").fill("What does the board pay memo say?")
    keys.get_by_role("button", name="Ask").click()
    expect(keys.locator(".answer")).to_contain_text("not valid")


def test_users_are_managed_in_the_page_and_every_control_has_a_label(page: Page, sidecar: str) -> None:
    sign_in(page, sidecar, "root")
    page.get_by_role("link", name="Users").click()
    form = page.locator("form.card")
    form.get_by_label("Username").fill("carla")
    form.get_by_label("Password").fill("short")
    form.get_by_role("button", name="Create").click()
    expect(page.get_by_role("alert")).to_contain_text("characters")
    form.get_by_label("Password").fill(PASSWORD)
    form.get_by_role("button", name="Create").click()
    expect(page.get_by_role("row", name=re.compile("carla"))).to_be_visible()
    shot(page, "9-users")
    for route in ("#/admin/users", "#/admin/settings", "#/admin/workflows", "#/chat"):
        page.goto(f"{sidecar}/ui/{route}")
        page.wait_for_load_state("networkidle")
        unlabelled = page.evaluate(UNLABELLED)
        assert unlabelled == [], (route, unlabelled)
    # the new user signs in with the keyboard alone
    page.get_by_role("button", name="Sign out").click()
    page.get_by_label("Username").fill("carla")
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    expect(page.locator("#who")).to_have_text("carla")
    expect(page.get_by_role("link", name="Users")).to_have_count(0)  # not an administrator


UNLABELLED = """() => [...document.querySelectorAll('input, select, textarea, button')]
  .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.textContent.trim())
  .map(el => el.outerHTML.slice(0, 120))"""


def test_the_ui_is_served_with_a_strict_content_security_policy(sidecar: str) -> None:
    import urllib3

    for path in ("/ui/", "/ui/static/app.js"):
        response = urllib3.request("GET", f"{sidecar}{path}")
        assert response.status == 200
        policy: Any = response.headers["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "script-src 'self'" in policy
    assert urllib3.request("GET", f"{sidecar}/ui/static/../../app.py").status == 404


def test_a_user_signed_in_by_the_reverse_proxy_needs_no_sign_in(browser: Browser, sidecar: str) -> None:
    context = browser.new_context(extra_http_headers={"X-Remote-User": "bea"})  # as the trusted proxy sends it
    page = context.new_page()
    try:
        page.goto(f"{sidecar}/ui/")
        expect(page.locator("#who")).to_have_text("bea")
        expect(page.get_by_role("button", name="Sign out")).to_be_hidden()
        expect(page.get_by_role("link", name="Users")).to_have_count(0)
        ask(page, "What does the board pay memo say about salaries?")
        expect(page.locator(".turn .answer a.cite")).to_have_attribute("href", OPENS_MEMO)
    finally:
        context.close()


MARKDOWN = "The memo says:\n\n- salaries rise by **3 percent** [1]\n- from `April`\n\n<script>alert(1)</script>"


def test_an_answer_is_rendered_copied_rated_regenerated_and_stopped(
    browser: Browser, sidecar: str, fake_llm: FakeLlm
) -> None:
    """An answer in Markdown shows as a list with emphasis and code (its HTML cleaned: the script
    is text), its [n] still a citation; Copy puts its text on the clipboard; a thumb rates it,
    with a comment, kept when the conversation is reopened and counted on the statistics page;
    Regenerate asks again; Stop ends a slow answer and the page takes the next question; in a
    dark system theme the page is dark."""
    fake_llm.answer = lambda prompt: SUMMARY if "Task: summarize" in prompt else MARKDOWN
    context = browser.new_context(extra_http_headers={"X-Remote-User": "bea"}, color_scheme="dark")
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=sidecar)
    page = context.new_page()
    page.set_default_timeout(20000)
    try:
        page.goto(f"{sidecar}/ui/#/chat")
        background = page.evaluate("getComputedStyle(document.body.parentElement).backgroundColor")
        assert background == "rgb(18, 22, 28)", background  # the dark theme's --bg
        ask(page, "What does the board pay memo say, in a list?")
        answer = page.locator(".turn .answer").last
        expect(answer.locator("li strong")).to_have_text("3 percent")
        expect(answer.locator("li code")).to_have_text("April")
        expect(answer.locator("li a.cite")).to_have_attribute("href", OPENS_MEMO)
        expect(answer).to_contain_text("<script>alert(1)</script>")  # shown as text, never run
        assert answer.locator("script").count() == 0
        turn = page.locator(".turn").last
        turn.get_by_role("button", name="Copy").click()
        expect(turn.get_by_role("status").filter(has_text="Copied.")).to_be_visible()
        assert page.evaluate("navigator.clipboard.readText()") == MARKDOWN
        turn.get_by_role("button", name="Good answer").click()
        expect(turn.get_by_role("button", name="Good answer")).to_have_attribute("aria-pressed", "true")
        turn.get_by_label("Comment (optional)").fill("Clear and sourced.")
        turn.get_by_role("button", name="Save the comment").click()
        expect(turn.get_by_role("status").filter(has_text="Thank you")).to_be_visible()
        shot(page, "21-answer-markdown-rated-dark")
        page.reload()  # reopened: the rating and its comment are still there
        turn = page.locator(".turn").last
        expect(turn.get_by_role("button", name="Good answer")).to_have_attribute("aria-pressed", "true")
        expect(turn.get_by_label("Comment (optional)")).to_have_value("Clear and sourced.")
        turn.get_by_role("button", name="Regenerate").click()
        expect(page.locator(".turn .question")).to_have_text(["What does the board pay memo say, in a list?"] * 2)
        expect(page.locator(".turn").last.get_by_role("button", name="Good answer")).to_be_visible()
        fake_llm.chunk_delay = 1.0  # a slow answer, stopped half-way
        ask(page, "What does the board pay memo say, slowly?")
        page.get_by_role("button", name="Stop").click()
        expect(page.get_by_role("status").filter(has_text="Stopped.")).to_be_visible()
        expect(page.get_by_role("button", name="Stop")).to_be_hidden()
        expect(page.get_by_role("button", name="Send")).to_be_enabled()
        page.get_by_role("link", name="Token statistics").click()
        ratings = page.get_by_role("region", name="Ratings of answers")
        expect(ratings).to_contain_text("Clear and sourced.")
        expect(ratings.locator(".rating-totals")).to_contain_text(re.compile(r"✓ [1-9]"))
    finally:
        context.close()


SLOW_LIST = """
const send = window.fetch.bind(window);
window.fetch = (input, init) => {
  const listing = /\\/conversations$/.test(String(input)) && !(init && init.method && init.method !== "GET");
  return listing ? new Promise((done) => setTimeout(done, 1500)).then(() => send(input, init)) : send(input, init);
};
"""


def test_a_question_sent_while_the_page_opens_keeps_its_answer(browser: Browser, sidecar: str) -> None:
    """The conversation list comes slowly (1.5 s): a question typed and sent at once waits for the
    page, then its streamed answer stays on screen and its conversation is listed once."""
    context = browser.new_context(extra_http_headers={"X-Remote-User": "bea"}, bypass_csp=True)
    context.add_init_script(SLOW_LIST)
    page = context.new_page()
    try:
        page.goto(f"{sidecar}/ui/#/chat")
        ask(page, "What does the board pay memo say about salaries, in short?")
        expect(page.locator(".turn .answer a.cite")).to_have_attribute("href", OPENS_MEMO, timeout=20000)
        listed = page.get_by_role("link", name="What does the board pay memo say about salaries, in short?")
        expect(listed).to_have_count(1)
    finally:
        context.close()


def test_random_users_in_the_page_see_only_their_documents_and_conversations(
    browser: Browser, sidecar: str, world: Settings
) -> None:
    """Random users sign in (in random order, some twice) and ask for the board's memo: the memo
    reaches bea's page only, and each page lists that user's conversations only."""
    users = StoreHandle(world).users()
    for name in ("otto", "carol"):
        if users.get(name) is None:
            users.create(name, PASSWORD)
    rng = random.Random(31)
    asked: dict[str, list[str]] = {}
    for turn in range(5):
        who = rng.choice(["bea", "otto", "carol"])
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(20000)
        try:
            sign_in(page, sidecar, who)
            question = f"What does the board pay memo say? (turn {turn}, {who})"
            ask(page, question)
            answer = page.locator(".turn .answer").last
            expect(answer).not_to_have_attribute("aria-busy", "true")
            expect(answer).not_to_be_empty()
            has_memo = page.locator('a[href^="/Datafari/URL?id=file%3A%2F%2Fshare%2Fboard%2Fpay.txt"]').count() > 0
            assert has_memo is (who == "bea"), (who, answer.inner_text())
            asked.setdefault(who, []).append(question)
            page.goto(f"{sidecar}/ui/#/usage")
            page.goto(f"{sidecar}/ui/#/chat")
            listed = page.get_by_role("complementary", name="Conversations")
            for mine in asked[who]:  # waits for the list: every conversation of mine is there
                expect(listed.get_by_role("link", name=mine[:80], exact=True)).to_be_visible()
            titles = listed.get_by_role("link").all_inner_texts()
            assert all(f", {who})" in t for t in titles if "(turn " in t), (who, titles)
        finally:
            context.close()
    assert "bea" in asked and len(asked) >= 2, asked  # both sides of the rule were seen


def test_files_indexed_from_the_page_show_their_progress_then_answer(page: Page, sidecar: str) -> None:
    sign_in(page, sidecar, "bea")  # not a writer of the index: refused, with why
    page.get_by_role("link", name="Indexing").click()
    page.get_by_label("Files (txt, md, html, pdf, docx, jsonl)").set_input_files(
        [{"name": "x.txt", "mimeType": "text/plain", "buffer": b"x"}]
    )
    page.get_by_role("button", name="Index").click()
    refused = page.get_by_role("alert")  # the message a user reads; the technical reason folded
    expect(refused).to_contain_text("Sorry, this request is not allowed.")
    expect(refused.get_by_text("security.update.users")).to_be_hidden()
    refused.get_by_text("Details").click()
    expect(refused.get_by_text("security.update.users")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, sidecar, "root")
    page.get_by_role("link", name="Indexing").click()
    files = [
        {"name": "zeppelin.txt", "mimeType": "text/plain", "buffer": b"The zeppelin hangar doors open northwards."},
        {
            "name": "hangar.md",
            "mimeType": "text/markdown",
            "buffer": b"# Hangar\n\nThe hangar roof is inspected yearly.",
        },
    ]
    page.get_by_label("Files (txt, md, html, pdf, docx, jsonl)").set_input_files(files)
    page.get_by_role("button", name="Index").click()
    expect(page.get_by_role("status").filter(has_text="Indexing finished.")).to_be_visible()
    progress = page.get_by_role("region", name="Progress")
    expect(progress.locator("progress")).to_have_attribute("value", "100")
    expect(progress).to_contain_text("done · 100% · documents: 2/2")
    shot(page, "10-indexing-job-done")
    page.get_by_role("link", name="Chat").click()
    ask(page, "Which way do the zeppelin hangar doors open?")
    expect(page.get_by_role("region", name="Sources").last.get_by_role("link").first).to_have_attribute(
        "href", re.compile(r"^/Datafari/URL\?id=upload%3A%2F%2Fzeppelin\.txt")
    )
