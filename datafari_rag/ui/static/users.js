// Local users (administrators): create, change the password or the role, delete.

import { api } from "./api.js";
import { field, h, status } from "./dom.js";
import { t } from "./i18n.js";

export async function usersView(main) {
  const { users } = await api("/users");
  const message = status();
  const rerender = async (text) => {
    main.replaceChildren();
    await usersView(main);
    if (text) main.querySelector(".status").show(text);
  };
  const act = async (call, done) => {
    try { await call(); await rerender(done); } catch (error) { message.fail(error); }
  };
  const rows = users.map((u) => {
    const password = h("input", { type: "password", autocomplete: "new-password", name: `password-${u.username}` });
    return h("tr", {},
      h("th", { scope: "row" }, u.username),
      h("td", {}, u.admin ? t("admin") : ""),
      h("td", {}, field(`${t("newPassword")} (${u.username})`, password),
        h("button", { type: "button", class: "small", onclick: () => act(
          () => api(`/users/${encodeURIComponent(u.username)}`, { method: "PUT", body: { password: password.value } }),
          t("userSaved")) }, t("save"))),
      h("td", {}, h("button", { type: "button", class: "small", onclick: () => act(
        () => api(`/users/${encodeURIComponent(u.username)}`, { method: "PUT", body: { admin: !u.admin } }), t("userSaved")) },
        u.admin ? t("removeAdmin") : t("makeAdmin")),
        " ",
        h("button", { type: "button", class: "small danger", "aria-label": `${t("delete")}: ${u.username}`, onclick: () => act(
          () => api(`/users/${encodeURIComponent(u.username)}`, { method: "DELETE" }), t("deleted")) }, t("delete"))));
  });
  const username = h("input", { name: "new-username", required: true, autocomplete: "off" });
  const password = h("input", { name: "new-password", type: "password", required: true, autocomplete: "new-password" });
  const admin = h("input", { name: "new-admin", type: "checkbox" });
  const form = h("form", { class: "card" }, h("h2", {}, t("createUser")),
    field(t("username"), username), field(t("password"), password),
    h("label", { class: "check" }, admin, " ", t("admin")),
    h("button", { type: "submit" }, t("create")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    act(() => api("/users", { method: "POST", body: { username: username.value, password: password.value, admin: admin.checked } }),
      t("userSaved"));
  });
  main.append(h("h1", {}, t("users")), message,
    h("table", { class: "users" }, h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, t("username")), h("th", { scope: "col" }, t("admin")),
      h("th", { scope: "col" }, t("password")), h("th", { scope: "col" }, ""))), h("tbody", {}, ...rows)),
    form);
}
