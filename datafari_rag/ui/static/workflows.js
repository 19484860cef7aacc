// Workflows (administrators): the list, a workflow's configuration (checked whole by the server
// on save), its API keys (a new key shown once, revocable), and a try-out with a key.

import { api } from "./api.js";
import { clear, field, h, problemNodes, status } from "./dom.js";
import { lang, t } from "./i18n.js";

// each extension point's entries, as the server's registry names them (datafari_rag/registry.py)
const POINTS = JSON.parse(document.querySelector('meta[name="extension-points"]').content);

// the workflow's model (datafari_rag/workflows/spec.py) as JSON schema: which fields the form has,
// their defaults and bounds. A field the model gains with a plain type (text, yes/no, a number, a
// choice) appears here by itself; the parts below (chunker, enhancers, filters, ranker) have their
// own controls, with the model's bounds.
const SCHEMA = JSON.parse(document.querySelector('meta[name="workflow-schema"]').content);
const PARTS = SCHEMA.$defs;
const OWN_CONTROLS = new Set(["prompts", "chunker", "queryEnhancers", "filters", "ranker"]);

const defaults = (schema) =>
  Object.fromEntries(Object.entries(schema.properties).filter(([, p]) => "default" in p).map(([k, p]) => [k, p.default]));
const plain = (prop) => prop.anyOf ? prop.anyOf.find((p) => p.type !== "null") : prop;

function select(name, choices, value) {
  const el = h("select", { name }, ...choices.map((c) => h("option", { value: c }, c)));
  el.value = value;
  return el;
}

// a control for a plain field of the schema (its kind, bounds and value); read back by valueOf
function control(name, prop, value) {
  const p = plain(prop);
  if (p.enum) return select(name, p.enum, value);
  if (p.type === "boolean") return h("input", { name, type: "checkbox", checked: !!value });
  if (p.type === "integer" || p.type === "number") {
    return h("input", { name, type: "number", min: p.minimum, max: p.maximum, step: p.type === "number" ? "any" : null,
      value: value ?? "" });
  }
  if ((p.maxLength || 0) > 1000) {
    const area = h("textarea", { name, rows: 3, maxlength: p.maxLength });
    area.value = value ?? "";
    return area;
  }
  return h("input", { name, maxlength: p.maxLength, required: SCHEMA.required?.includes(name), value: value ?? "" });
}

function valueOf(input, prop) {
  const p = plain(prop);
  if (p.type === "boolean") return input.checked;
  if (p.type === "integer" || p.type === "number") return Number(input.value);
  return input.value;
}

const number = (part, name, value) => control(name, PARTS[part].properties[name], value ?? PARTS[part].properties[name].default);

function workflowForm(workflow, onSaved) {
  const w = workflow || { ...defaults(SCHEMA), queryEnhancers: [], filters: {}, prompts: {}, ranker: null, name: "" };
  const enhancer = (kind) => w.queryEnhancers.find((e) => e.kind === kind);
  const check = (input, label) => h("label", { class: "check" }, input, " ", label);
  const plainFields = Object.entries(SCHEMA.properties).filter(([name]) => !OWN_CONTROLS.has(name));
  const inputs = Object.fromEntries(plainFields.map(([name, prop]) => [name, control(name, prop, w[name])]));
  const shown = (name, prop) => {
    const label = t(name) === name ? (prop.description || name) : t(name);
    return inputs[name].type === "checkbox" ? check(inputs[name], label) : field(label, inputs[name]);
  };
  const c = {
    rewrite: h("input", { name: "rewrite", type: "checkbox", checked: !!enhancer("rewrite") }),
    multiQuery: h("input", { name: "multiQuery", type: "checkbox", checked: !!enhancer("multiQuery") }),
    multiQueryCount: number("MultiQuery", "count", enhancer("multiQuery")?.count),
    hyde: h("input", { name: "hyde", type: "checkbox", checked: !!enhancer("hyde") }),
    selfQuery: h("input", { name: "selfQuery", value: (enhancer("selfQuery")?.fields || []).join(",") }),
    filters: h("textarea", { name: "filters", rows: 2 }),
    ranker: select("ranker", ["", ...POINTS.ranker], w.ranker?.kind || ""),
    topN: number("LlmRanker", "topN", w.ranker?.topN),
    rankerUrl: h("input", { name: "rankerUrl", value: w.ranker?.url || "" }),
    rankerModel: h("input", { name: "rankerModel", value: w.ranker?.model || "" }),
    rankerKey: h("input", { name: "rankerKey", type: "password", autocomplete: "off",
      placeholder: w.ranker?.apiKey ? t("secretSet") : t("secretUnset") }),
    rankerPath: h("input", { name: "rankerPath", value: w.ranker?.path || "" }),
    chunker: control("chunker", PARTS.ChunkerSpec.properties.kind, w.chunker?.kind ?? PARTS.ChunkerSpec.properties.kind.default),
    chunkSize: number("ChunkerSpec", "maxChunkSize", w.chunker?.maxChunkSize),
    evaluator: h("input", { name: "evaluator", type: "checkbox", checked: !!w.chunker?.evaluator }),
    threshold: number("ChunkerSpec", "threshold", w.chunker?.threshold),
    overlap: number("ChunkerSpec", "overlap", w.chunker?.overlap),
  };
  c.filters.value = Object.keys(w.filters || {}).length ? JSON.stringify(w.filters) : "";
  c.ranker.options[0].textContent = t("none");
  const message = status();
  const own = {
    queryEnhancers: () => h("fieldset", {}, h("legend", {}, t("enhancers")), check(c.rewrite, t("rewrite")),
      check(c.multiQuery, t("multiQuery")), field(`${t("multiQuery")}: ${t("count")}`, c.multiQueryCount),
      check(c.hyde, t("hyde")), field(`${t("selfQuery")}: ${t("fields")}`, c.selfQuery)),
    filters: () => field(t("filters"), c.filters),
    ranker: () => h("fieldset", {}, h("legend", {}, t("ranker")), field(t("ranker"), c.ranker), field(t("topN"), c.topN),
      field(`${t("url")} (api)`, c.rankerUrl), field(`${t("model")} (api)`, c.rankerModel),
      field(`${t("apiKey")} (api)`, c.rankerKey), field(`${t("path")} (onnx)`, c.rankerPath)),
    chunker: () => h("fieldset", {}, h("legend", {}, t("chunker")), field(t("chunker"), c.chunker), field(t("chunkSize"), c.chunkSize),
      field(t("overlap"), c.overlap), check(c.evaluator, t("evaluator")), field(t("threshold"), c.threshold)),
  };
  // in the model's order; the chunker (indexing) after what the answers use
  const order = Object.keys(SCHEMA.properties).filter((name) => name !== "chunker" && name !== "prompts");
  const form = h("form", { class: "card workflow-form", "aria-label": w.id ? `${t("edit")}: ${w.name}` : t("create") },
    ...order.map((name) => own[name] ? own[name]() : shown(name, SCHEMA.properties[name])),
    own.chunker(),
    h("button", { type: "submit" }, t("save")), message);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    let filters = {};
    try { filters = c.filters.value.trim() ? JSON.parse(c.filters.value) : {}; }
    catch { message.show(`${t("filters")}: JSON`, "error"); c.filters.focus(); return; }
    const enhancers = [];
    if (c.rewrite.checked) enhancers.push({ kind: "rewrite" });
    if (c.multiQuery.checked) enhancers.push({ kind: "multiQuery", count: Number(c.multiQueryCount.value) });
    if (c.hyde.checked) enhancers.push({ kind: "hyde" });
    const fields = c.selfQuery.value.split(",").map((f) => f.trim()).filter(Boolean);
    if (fields.length) enhancers.push({ kind: "selfQuery", fields });
    let ranker = null;
    if (c.ranker.value) {
      ranker = { kind: c.ranker.value, topN: Number(c.topN.value) };
      if (ranker.kind === "api") {
        ranker.url = c.rankerUrl.value;
        if (c.rankerModel.value) ranker.model = c.rankerModel.value;
        if (c.rankerKey.value) ranker.apiKey = c.rankerKey.value;
      }
      if (ranker.kind === "onnx") ranker.path = c.rankerPath.value;
    }
    const body = {
      ...Object.fromEntries(plainFields.map(([name, prop]) => [name, valueOf(inputs[name], prop)])),
      prompts: w.prompts || {}, queryEnhancers: enhancers, filters, ranker,
      chunker: { kind: c.chunker.value, maxChunkSize: Number(c.chunkSize.value), overlap: Number(c.overlap.value),
        evaluator: c.evaluator.checked, threshold: Number(c.threshold.value) },
    };
    try {
      const { workflow: saved } = w.id
        ? await api(`/workflows/${w.id}`, { method: "PUT", body })
        : await api("/workflows", { method: "POST", body });
      onSaved(saved);
    } catch (error) { message.fail(error); }
  });
  return form;
}

async function keysPanel(workflow) {
  const panel = h("section", { class: "card keys", "aria-labelledby": "keys-title" });
  const message = status();
  const render = async (secret) => {
    clear(panel);
    const { keys } = await api(`/workflows/${workflow.id}/keys`);
    const name = h("input", { name: "keyName", maxlength: 100 });
    const user = h("input", { name: "keyUser", autocomplete: "off" });
    const form = h("form", {}, field(t("keyName"), name), field(t("keyUser"), user), h("button", { type: "submit" }, t("newKey")));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = { name: name.value };
      if (user.value.trim()) body.username = user.value.trim();
      try { const created = await api(`/workflows/${workflow.id}/keys`, { method: "POST", body }); await render(created.secret); }
      catch (error) { message.fail(error); }
    });
    panel.append(h("h2", { id: "keys-title" }, `${t("keys")}: ${workflow.name}`),
      h("ul", {}, ...keys.map((k) => h("li", {}, `${k.name || "—"} · ${k.prefix}… · ${k.username}`,
        k.revoked_at ? ` · ${t("revoked")}` : " ",
        k.revoked_at ? null : h("button", { type: "button", class: "small danger", "aria-label": `${t("revoke")}: ${k.prefix}`,
          onclick: async () => { await api(`/workflows/${workflow.id}/keys/${k.id}`, { method: "DELETE" }); await render(); } },
        t("revoke"))))),
      form, message);
    if (secret) {
      panel.append(h("div", { class: "secret", role: "alert" }, h("p", {}, t("keyShownOnce")),
        h("output", { class: "new-key", "aria-label": t("apiKey") }, secret)));
    }
    panel.append(tryIt(workflow, secret));
  };
  await render();
  return panel;
}

function tryIt(workflow, secret) {
  const key = h("input", { name: "tryKey", type: "password", autocomplete: "off", value: secret || "" });
  const query = h("input", { name: "tryQuery", required: true });
  const output = h("div", { class: "answer", "aria-live": "polite" });
  const form = h("form", { class: "try" }, h("h3", {}, t("tryIt")), field(t("apiKey"), key), field(t("question"), query),
    h("button", { type: "submit" }, t("ask")), h("h4", {}, t("answer")), output);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    output.textContent = "…";
    output.classList.remove("error");
    try {
      const content = await api(`/workflows/${workflow.id}/query`, { method: "POST",
        body: { query: query.value, lang: lang() }, extraHeaders: { "X-API-Key": key.value } });
      output.replaceChildren(h("p", {}, content.message),
        h("ol", {}, ...content.documents.map((d) => h("li", {}, /^https?:\/\//i.test(d.url || "")
          ? h("a", { href: d.url, target: "_blank", rel: "noopener noreferrer" }, d.title || d.url)
          : `${d.title || d.url} (${d.url})`))));  // another scheme is never a link's target
    } catch (error) { output.replaceChildren(...problemNodes(error.message, error.reason)); output.classList.add("error"); }
  });
  return form;
}

export async function workflowsView(main) {
  const { workflows } = await api("/workflows");
  const detail = h("div", { class: "workflow-detail" });
  const message = status();
  const show = async (workflow) => {
    clear(detail);
    detail.append(workflowForm(workflow, async (saved) => {
      main.replaceChildren();
      await workflowsView(main);
      main.querySelector(".status").show(t("workflowSaved"));
      await main.openWorkflow(saved);
    }));
    if (workflow?.id) detail.append(await keysPanel(workflow));
    detail.querySelector("input")?.focus();
  };
  main.openWorkflow = show;
  const rows = workflows.map((w) => h("tr", {},
    h("th", { scope: "row" }, w.name), h("td", {}, w.retrieval), h("td", {}, w.strategy),
    h("td", {}, w.default ? "✔" : ""),
    h("td", {}, h("button", { type: "button", class: "small", "aria-label": `${t("edit")}: ${w.name}`, onclick: () => show(w) }, t("edit")),
      " ",
      h("button", { type: "button", class: "small danger", "aria-label": `${t("delete")}: ${w.name}`, onclick: async () => {
        try { await api(`/workflows/${w.id}`, { method: "DELETE" }); main.replaceChildren(); await workflowsView(main); }
        catch (error) { message.fail(error); }
      } }, t("delete")))));
  main.append(h("h1", {}, t("workflows")), message,
    h("table", { class: "workflows" }, h("thead", {}, h("tr", {}, ...["name", "retrieval", "strategy", "default", ""].map(
      (k) => h("th", { scope: "col" }, k ? t(k) : "")))), h("tbody", {}, ...rows)),
    ...(workflows.length ? [] : [h("p", { class: "empty" }, t("noWorkflow"))]),
    h("button", { type: "button", onclick: () => show(null) }, t("create")), detail);
}
