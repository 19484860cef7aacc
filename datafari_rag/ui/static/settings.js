// The "RAG & AI configuration" page: every rag.properties key by section; the run-time ones
// editable, saved together (checked whole by the server), applied without restart; a secret is
// never shown back, only whether it is set.

import { api } from "./api.js";
import { field, h, status } from "./dom.js";
import { t } from "./i18n.js";

function control(setting) {
  const disabled = !setting.live;
  const name = setting.key;
  if (setting.choices.length) {
    const select = h("select", { name, disabled });
    for (const choice of setting.choices) select.append(h("option", { value: choice }, choice || "(empty)"));
    select.value = setting.value;
    return select;
  }
  if (setting.type === "bool") {
    return h("select", { name, disabled }, h("option", { value: "true" }, "true"), h("option", { value: "false" }, "false"));
  }
  if (setting.secret) {
    return h("input", { name, type: "password", autocomplete: "off", disabled,
      placeholder: setting.set ? t("secretSet") : t("secretUnset") });
  }
  const numeric = setting.type === "int" || setting.type === "float";
  const input = h("input", { name, type: numeric ? "number" : "text", disabled,
    step: setting.type === "float" ? "any" : null, min: numeric ? setting.minimum : null,
    max: numeric && setting.maximum !== null ? setting.maximum : null });
  input.value = setting.value;
  return input;
}

export async function settingsView(main) {
  const { settings } = await api("/admin/settings");
  const message = status();
  const controls = new Map();
  const form = h("form", { class: "settings", novalidate: true }); // the server checks, and names the key
  const sections = new Map();
  for (const setting of settings) {
    if (!sections.has(setting.section)) {
      const fieldset = h("fieldset", {}, h("legend", {}, setting.section));
      sections.set(setting.section, fieldset);
      form.append(fieldset);
    }
    const input = control(setting);
    if (setting.type === "bool" && !setting.secret) input.value = setting.value;
    controls.set(setting.key, { input, setting });
    const help = `${setting.help}${setting.live ? "" : ` — ${t("atStart")}`}`;
    const row = field(setting.key, input, help);
    if (setting.overridden) {
      const reset = h("input", { type: "checkbox", name: `reset:${setting.key}`, "aria-label": `${t("reset")}: ${setting.key}` });
      row.append(h("label", { class: "reset" }, reset, " ", t("reset")));
      controls.get(setting.key).reset = reset;
    }
    sections.get(setting.section).append(row);
  }
  const save = h("button", { type: "submit" }, t("save"));
  form.append(h("div", { class: "actions" }, save, message));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const values = {};
    for (const [key, { input, setting, reset }] of controls) {
      if (!setting.live) continue;
      if (reset?.checked) { values[key] = null; continue; }
      if (setting.secret) { if (input.value) values[key] = input.value; continue; }
      if (input.value !== setting.value) values[key] = input.value;
    }
    for (const [key, { setting }] of controls) { // a new address gets its own secret: none unless typed
      const secret = setting.receivesSecret;
      if (secret && values[key] != null && !(secret in values)) values[secret] = "";
    }
    if (!Object.keys(values).length) return;
    save.disabled = true;
    try {
      await api("/admin/settings", { method: "PUT", body: { values } });
      main.replaceChildren();
      await settingsView(main);
      main.querySelector(".actions .status").show(t("saved"));
    } catch (error) {
      message.fail(error);
    } finally { save.disabled = false; }
  });
  const filter = h("input", { type: "search", name: "filter", autocomplete: "off" });
  filter.addEventListener("input", () => { // only the keys (or help texts) holding the words typed
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    for (const { input, setting } of controls.values()) {
      const text = `${setting.key} ${setting.help}`.toLowerCase();
      input.closest(".field").hidden = !words.every((word) => text.includes(word));
    }
    for (const fieldset of sections.values()) fieldset.hidden = ![...fieldset.querySelectorAll(".field")].some((f) => !f.hidden);
  });
  main.append(h("h1", {}, t("settings")), field(t("filterKeys"), filter), form);
}
