// Sign-in with a local account: POST auth/login gives the token every other call carries.

import { api, session } from "./api.js";
import { field, h, status } from "./dom.js";
import { t } from "./i18n.js";

export function loginView(done) {
  const username = h("input", { name: "username", autocomplete: "username", required: true });
  const password = h("input", { name: "password", type: "password", autocomplete: "current-password", required: true });
  const message = status();
  const form = h("form", { class: "card login", "aria-labelledby": "login-title" },
    h("h1", { id: "login-title" }, t("signIn")),
    field(t("username"), username),
    field(t("password"), password),
    h("button", { type: "submit" }, t("signIn")),
    message);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const content = await api("/auth/login", { method: "POST", body: { username: username.value, password: password.value } });
      session.save(content.token, content.user);
      done();
    } catch (error) {
      message.fail(error);
      password.select();
    }
  });
  queueMicrotask(() => username.focus());
  return form;
}
