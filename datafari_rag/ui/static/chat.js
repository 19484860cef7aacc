// The chat page: my conversations (new, open, rename, delete), a question answered as it is
// written (ai/stream), its numbered citations linked to their sources, and a summary of any source.

import { api, stream } from "./api.js";
import { clear, field, h, status } from "./dom.js";
import { lang, t } from "./i18n.js";

const CITATION = /\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g;

/** The answer's text with each [n] a link to source n (a source not found stays text). */
function answerNodes(text, sources) {
  const byNumber = new Map(sources.map((s) => [s.number, s]));
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(CITATION)) {
    nodes.push(text.slice(last, match.index));
    const numbers = match[1].split(",").map((n) => Number(n.trim()));
    nodes.push("[");
    numbers.forEach((n, i) => {
      const source = byNumber.get(n);
      if (i) nodes.push(", ");
      nodes.push(source
        ? h("a", { class: "cite", href: source.url, title: source.title || source.url, target: "_blank", rel: "noopener" }, String(n))
        : String(n));
    });
    nodes.push("]");
    last = match.index + match[0].length;
  }
  nodes.push(text.slice(last));
  return nodes;
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
      h("a", { href: source.url, target: "_blank", rel: "noopener" }, source.title || source.url), " ", button, summary));
  }
  return h("section", { class: "turn-sources", "aria-label": t("sources") }, h("h3", {}, t("sources")), list);
}

function turnView(question, answerText, sources, failed) {
  const answer = h("div", { class: `answer${failed ? " error" : ""}` }, ...answerNodes(answerText || "", sources));
  return h("li", { class: "turn" }, h("p", { class: "question" }, question), answer, sourcesList(sources));
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
          catch (error) { message.show(error.message, "error"); }
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
      const text = block.withheld ? block.withheld_reason : block.answer;  // a source the reader lost
      turns.append(turnView(block.question, text, block.sources || [], block.status === "error"));
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = question.value.trim();
    if (!text) return;
    send.disabled = true;
    message.show(t("thinking"));
    try {
      if (!current) {
        const { conversation } = await api("/conversations", { method: "POST", body: { title: text.slice(0, 80) } });
        current = conversation.id;
        history.replaceState(null, "", `#/chat/${current}`);
        await refreshList();
      }
      const answer = h("div", { class: "answer streaming", "aria-live": "polite", "aria-busy": "true" });
      const turn = h("li", { class: "turn" }, h("p", { class: "question" }, text), answer);
      turns.append(turn);
      question.value = "";
      let sources = [];
      await stream({ query: text, lang: lang(), conversationId: current }, (type, data) => {
        if (type === "sources.final") sources = data.items.map((s, i) => ({ ...s, number: i + 1 }));
        else if (type === "message.delta") answer.append(data.text);
        else if (type === "message.final") {
          const cited = new Set((data.references || []).map((r) => r.number));
          sources = sources.map((s) => ({ ...s, cited: cited.has(s.number) }));
          turn.replaceWith(turnView(text, data.text, sources, false));
        } else if (type === "error") {
          answer.classList.add("error");
          answer.textContent = data.reason || data.message;
        }
      });
      answer.setAttribute("aria-busy", "false");
      message.show("");
    } catch (error) {
      message.show(error.message, "error");
    } finally {
      send.disabled = false;
      question.focus();
    }
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
