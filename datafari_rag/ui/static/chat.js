// The chat page: my conversations (new, open, rename, delete), a question answered as it is
// written (ai/stream), its numbered citations linked to their sources, and a summary of any source.

import { api, documentAddress, preview, stream } from "./api.js";
import { append, clear, field, h, problemNodes, status } from "./dom.js";
import { lang, t } from "./i18n.js";

const WEB = /^https?:\/\//i;

/** A link to a source: a web address opens as itself; any other (file://, upload://, or a scheme
 * that could run: javascript:) is never a link's target — it opens the document's preview, read
 * with the user's access, the cited passage highlighted. */
function sourceLink(source, attrs, ...children) {
  if (WEB.test(source.url || "")) {
    return h("a", { ...attrs, href: source.url, target: "_blank", rel: "noopener noreferrer" }, ...children);
  }
  return h("a", { ...attrs, href: documentAddress(source.id, source.content), onclick: (event) => {
    event.preventDefault();
    showPreview(source);
  } }, ...children);
}

/** The document in a dialog: its text, the cited passage highlighted and scrolled to. */
async function showPreview(source) {
  const body = h("article", { class: "document-text" }, "…");
  const close = h("button", { type: "button", class: "small" }, t("close"));
  const dialog = h("dialog", { class: "preview", "aria-label": source.title || source.url },
    h("h2", {}, source.title || source.url), body, close);
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  try {
    const doc = await preview(source.id, source.content);
    const span = doc.passage;
    clear(body);
    if (span) {
      const mark = h("mark", {}, doc.text.slice(span.start, span.end));
      body.append(doc.text.slice(0, span.start), mark, doc.text.slice(span.end));
      mark.scrollIntoView({ block: "center" });
    } else body.append(doc.text);
  } catch (error) {
    clear(body);
    append(body, problemNodes(error.message, error.reason));
  }
}

const CITATION = /\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g;

/** ``text`` with each [n] a link to source n (a source not found stays text). */
function citationNodes(text, byNumber) {
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(CITATION)) {
    nodes.push(text.slice(last, match.index));
    const numbers = match[1].split(",").map((n) => Number(n.trim()));
    nodes.push("[");
    numbers.forEach((n, i) => {
      const source = byNumber.get(n);
      if (i) nodes.push(", ");
      nodes.push(source ? sourceLink(source, { class: "cite", title: source.title || source.url }, String(n)) : String(n));
    });
    nodes.push("]");
    last = match.index + match[0].length;
  }
  nodes.push(text.slice(last));
  return nodes;
}

/** The answer: its HTML when the server sent it (Markdown rendered, then cleaned to an allow-list
 * on the server), else its text; each [n] outside code and links becomes a citation link. */
function answerBody(text, html, sources) {
  const body = h("div", { class: "markdown" });
  if (html) {
    const template = document.createElement("template");
    template.innerHTML = html;
    body.append(template.content);
  } else body.append(text || "");
  const byNumber = new Map(sources.map((s) => [s.number, s]));
  const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => (node.parentElement.closest("a, code, pre") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  const texts = [];
  while (walker.nextNode()) texts.push(walker.currentNode);
  for (const node of texts) {
    const parts = citationNodes(node.data, byNumber);
    if (parts.length > 1) node.replaceWith(...parts);
  }
  return body;
}

/** Thumbs up or down on an answer (kept per turn, mine only), then an optional comment. */
function ratingView(conversationId, blockId, feedback) {
  const note = status();
  let rating = feedback?.rating || null;
  const comment = h("textarea", { rows: 2, maxlength: 2000 });
  comment.value = feedback?.comment || "";
  const commentForm = h("form", { class: "comment", hidden: !rating }, field(t("comment"), comment),
    h("button", { type: "submit", class: "small" }, t("sendComment")));
  const thumb = (value, label, symbol) => h("button", {
    type: "button", class: "small thumb", "aria-label": label, "aria-pressed": String(rating === value),
    onclick: () => send(value),
  }, symbol);
  const up = thumb("up", t("goodAnswer"), `✓ ${t("good")}`);
  const down = thumb("down", t("badAnswer"), `✗ ${t("bad")}`);
  async function send(value) {
    try {
      await api(`/conversations/${conversationId}/blocks/${blockId}/feedback`,
        { method: "PUT", body: { rating: value, comment: comment.value.trim() } });
      rating = value;
      up.setAttribute("aria-pressed", String(value === "up"));
      down.setAttribute("aria-pressed", String(value === "down"));
      commentForm.hidden = false;
      note.show(t("thanks"));
    } catch (error) { note.fail(error); }
  }
  commentForm.addEventListener("submit", (event) => { event.preventDefault(); if (rating) send(rating); });
  return h("div", { class: "rating" }, up, down, commentForm, note);
}

function sourcesList(sources) {
  if (!sources.length) return null;
  const list = h("ol", { class: "sources" });
  for (const source of sources) {
    const summary = h("div", { class: "summary", "aria-live": "polite" });
    const button = h("button", {
      type: "button", class: "small", "aria-label": `${t("summarize")}: ${source.title || source.url}`,
      onclick: async () => {
        button.disabled = true;
        summary.textContent = "…";
        try {
          const content = await api("/ai/summarize", { method: "POST", body: { id: source.id, lang: lang() } });
          summary.textContent = content.message;
        } catch (error) {
          summary.textContent = error.message;
          summary.classList.add("error");
        } finally { button.disabled = false; }
      },
    }, t("summarize"));
    list.append(h("li", { value: source.number, class: source.cited ? "cited" : null },
      sourceLink(source, {}, source.title || source.url), " ", button, summary));
  }
  return h("section", { class: "turn-sources", "aria-label": t("sources") }, h("h3", {}, t("sources")), list);
}

/** One question and its answer, with what can be done with it: copy, regenerate, rate. */
function turnView(turn, regenerate) {
  const { question, text, html, sources = [], failed, blockId, conversationId, feedback } = turn;
  const answer = h("div", { class: `answer${failed ? " error" : ""}` }, answerBody(text, html, sources));
  const note = status();
  const actions = failed ? null : h("div", { class: "turn-actions" },
    h("button", { type: "button", class: "small", onclick: async () => {
      try { await navigator.clipboard.writeText(text || ""); note.show(t("copied")); } catch (error) { note.fail(error); }
    } }, t("copy")),
    h("button", { type: "button", class: "small", onclick: () => regenerate(question) }, t("regenerate")),
    blockId && conversationId ? ratingView(conversationId, blockId, feedback) : null, note);
  return h("li", { class: "turn" }, h("p", { class: "question" }, question), answer, actions, sourcesList(sources));
}

export async function chatView(main, rest) {
  let current = rest[0] || null;
  const list = h("ul", { class: "conversation-list" });
  const turns = h("ol", { class: "turns", "aria-label": t("chat") });
  const question = h("textarea", { name: "question", rows: 3, required: true, maxlength: 2000 });
  const send = h("button", { type: "submit" }, t("send"));
  const message = status();
  const form = h("form", { class: "ask" }, field(t("question"), question), send, message);

  let listed = 0;  // two refreshes in flight (the page opening, a first question) land once
  async function refreshList() {
    const ticket = ++listed;
    const { conversations } = await api("/conversations");
    if (ticket !== listed) return;
    clear(list);
    if (!conversations.length) list.append(h("li", { class: "empty" }, t("noConversation")));
    for (const c of conversations) {
      const open = h("a", { href: `#/chat/${c.id}`, class: "open", "aria-current": c.id === current ? "page" : null }, c.title);
      const rename = h("button", { type: "button", class: "small", "aria-label": `${t("rename")}: ${c.title}`,
        onclick: async () => {
          const title = prompt(t("newTitle"), c.title);
          if (!title) return;
          try { await api(`/conversations/${c.id}`, { method: "PATCH", body: { title } }); await refreshList(); }
          catch (error) { message.fail(error); }
        } }, t("rename"));
      const remove = h("button", { type: "button", class: "small danger", "aria-label": `${t("delete")}: ${c.title}`,
        onclick: async () => {
          if (!confirm(t("confirmDelete"))) return;
          await api(`/conversations/${c.id}`, { method: "DELETE" });
          if (c.id === current) { location.hash = "#/chat"; return; }
          await refreshList();
        } }, t("delete"));
      list.append(h("li", {}, open, " ", rename, " ", remove));
    }
  }

  async function showConversation() {
    clear(turns);
    if (!current) return;
    const { conversation } = await api(`/conversations/${current}`);
    clear(turns);
    for (const block of conversation.blocks) {
      const withheld = block.withheld;  // a source the reader lost: the answer is not shown
      turns.append(turnView({
        question: block.question, text: withheld ? block.withheld_reason : block.answer,
        html: withheld ? null : block.answer_html, sources: block.sources || [], failed: block.status === "error",
        blockId: withheld ? null : block.id, conversationId: current, feedback: block.feedback,
      }, ask));
    }
  }

  let asking = null;  // the answer being streamed: Stop aborts it
  const stop = h("button", { type: "button", class: "secondary", hidden: true, onclick: () => asking?.abort() }, t("stop"));
  form.append(stop);

  async function ask(text) {
    send.disabled = true;
    stop.hidden = false;
    asking = new AbortController();
    message.show(t("thinking"));
    const answer = h("div", { class: "answer streaming", "aria-live": "polite", "aria-busy": "true" });
    try {
      if (!current) {
        const { conversation } = await api("/conversations", { method: "POST", body: { title: text.slice(0, 80) } });
        current = conversation.id;
        history.replaceState(null, "", `#/chat/${current}`);
        await refreshList();
      }
      const turn = h("li", { class: "turn" }, h("p", { class: "question" }, text), answer);
      turns.append(turn);
      let sources = [];
      await stream({ query: text, lang: lang(), conversationId: current }, (type, data) => {
        if (type === "sources.final") sources = data.items.map((s, i) => ({ ...s, number: i + 1 }));
        else if (type === "message.delta") answer.append(data.text);
        else if (type === "message.final") {
          const cited = new Set((data.references || []).map((r) => r.number));
          sources = sources.map((s) => ({ ...s, cited: cited.has(s.number) }));
          turn.replaceWith(turnView({ question: text, text: data.text, html: data.html, sources,
            blockId: data.blockId, conversationId: current }, ask));
        } else if (type === "error") {
          answer.classList.add("error");
          clear(answer);
          append(answer, problemNodes(data.message || data.reason, data.reason));
        }
      }, asking.signal);
      message.show("");
    } catch (error) {
      if (error.name === "AbortError") message.show(t("stopped"));
      else message.fail(error);
    } finally {
      answer.setAttribute("aria-busy", "false");
      asking = null;
      stop.hidden = true;
      send.disabled = false;
      question.focus();
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = question.value.trim();
    if (!text) return;
    question.value = "";
    await ask(text);
  });

  const newButton = h("button", { type: "button", onclick: () => {
    current = null;
    history.replaceState(null, "", "#/chat");
    clear(turns);
    refreshList();
    question.focus();
  } }, t("newConversation"));
  main.append(h("div", { class: "chat" },
    h("aside", { class: "conversations", "aria-labelledby": "conv-title" },
      h("h2", { id: "conv-title" }, t("conversations")), newButton, list),
    h("section", { class: "thread", "aria-label": t("chat") }, turns, form)));
  send.disabled = true;  // a question sent before the conversation is shown would be wiped by it
  try {
    await refreshList();
    await showConversation();
  } finally {
    send.disabled = false;
  }
}
