// Building the page from data: every text goes in as text (never as HTML), so nothing a
// document, an answer or a user typed can run in the page. (The one exception, an answer's
// Markdown, comes as HTML the server cleaned to an allow-list: chat.js.)

import { t } from "./i18n.js";

/** An element: h("button", {type: "button", onclick: f}, "Send"). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(el.dataset, value);
    else if (value === true) el.setAttribute(name, "");
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** A labelled field: the label names the control (for screen readers and for tests). */
export function field(label, control, help) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 10)}`;
  control.id = id;
  const parts = [h("label", { for: id }, label), control];
  if (help) {
    const helpId = `${id}-help`;
    control.setAttribute("aria-describedby", helpId);
    parts.push(h("small", { id: helpId, class: "help" }, help));
  }
  return h("div", { class: "field" }, ...parts);
}

/** A refusal as the user reads it: its message, and its technical reason (when it says more)
 * folded in a details box. */
export function problemNodes(message, reason) {
  if (!reason || reason === message) return [message];
  return [message, " ", h("details", { class: "reason" }, h("summary", {}, t("details")), h("span", {}, reason))];
}

/** A region that tells assistive technologies about errors and successes. */
export function status() {
  const el = h("div", { class: "status", role: "status", "aria-live": "polite" });
  el.show = (text, kind = "ok", reason) => {
    clear(el);
    append(el, problemNodes(text, reason));
    el.className = `status ${kind}`;
    el.setAttribute("role", kind === "error" ? "alert" : "status");
  };
  el.fail = (error) => el.show(error.message, "error", error.reason);
  return el;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}
