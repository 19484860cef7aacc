// The web UI: a page per route (#/chat, #/usage, #/admin/settings, #/admin/workflows,
// #/admin/users, #/login), each built from the sidecar's REST API with the signed-in user's token.

import { api, proxiedUser, session } from "./api.js";
import { chatView } from "./chat.js";
import { h, clear, problemNodes } from "./dom.js";
import { lang, setLang, t, translateStatic } from "./i18n.js";
import { indexingView } from "./indexing.js";
import { loginView } from "./login.js";
import { settingsView } from "./settings.js";
import { usageView } from "./usage.js";
import { usersView } from "./users.js";
import { workflowsView } from "./workflows.js";

const ROUTES = {
  chat: { view: chatView, label: "chat" },
  usage: { view: usageView, label: "usage" },
  indexing: { view: indexingView, label: "indexing" },
  "admin/settings": { view: settingsView, label: "settings", admin: true },
  "admin/workflows": { view: workflowsView, label: "workflows", admin: true },
  "admin/users": { view: usersView, label: "users", admin: true },
};

function route() {
  const path = location.hash.replace(/^#\/?/, "");
  const [name, ...rest] = path.split("/");
  const key = name === "admin" ? `admin/${rest.shift() || ""}` : name;
  return { key, rest };
}

function renderNav(current) {
  const nav = clear(document.getElementById("nav"));
  const admin = session.user?.admin;
  for (const [key, r] of Object.entries(ROUTES)) {
    if (r.admin && !admin) continue;
    nav.append(h("a", { href: `#/${key}`, "aria-current": key === current ? "page" : null }, t(r.label)));
  }
  document.getElementById("who").textContent = session.user ? session.user.username : "";
}

async function render() {
  translateStatic();
  document.documentElement.lang = lang();
  const main = clear(document.getElementById("main"));
  const header = document.querySelector("header.top");
  const { key, rest } = route();
  if (!session.user && key !== "login") {
    const user = await proxiedUser();
    if (user) session.save(null, user);
  }
  if (!session.user || key === "login") {
    header.hidden = true;
    main.append(loginView(() => go("#/chat")));
    return;
  }
  const target = ROUTES[key] || ROUTES.chat;
  header.hidden = false;
  document.getElementById("sign-out").hidden = session.proxied; // the proxy signs users out, not this page
  renderNav(ROUTES[key] ? key : "chat");
  document.title = `${t(target.label)} — datafari-rag`;
  const page = h("div", { class: "page" }); // a later render replaces it: a slow view never lands twice
  main.append(page);
  try {
    await target.view(page, rest);
  } catch (error) {
    if (error.status === 401) { session.clear(); go("#/login"); return; }
    page.append(h("div", { class: "status error", role: "alert" }, ...problemNodes(error.message, error.reason)));
  }
}

/** Shows the page of ``hash``: once (a new hash renders through hashchange, the same one now). */
function go(hash) {
  if (location.hash === hash) render();
  else location.hash = hash;
}

document.getElementById("sign-out").addEventListener("click", () => {
  session.clear();
  go("#/login");
});
const select = document.getElementById("lang-select");
select.value = lang();
select.addEventListener("change", () => { setLang(select.value); render(); });
window.addEventListener("hashchange", render);
export { api };
render();
