// Indexing (writers of the index): files sent as a job, its progress followed as it streams
// (POST index/jobs, then its Server-Sent Events read with the user's token).

import { headers, PREFIX, readEvents, refusal } from "./api.js";
import { field, h, status } from "./dom.js";
import { t } from "./i18n.js";

export async function indexingView(main) {
  const files = h("input", { name: "files", type: "file", multiple: true, required: true,
    accept: ".txt,.md,.html,.htm,.pdf,.docx,.jsonl" });
  const fields = h("textarea", { name: "fields", rows: 2 });
  const workflow = h("input", { name: "workflow", autocomplete: "off" });
  // who may read the files: only me by default, never everyone by accident
  const visibility = h("select", { name: "visibility" },
    h("option", { value: "private" }, t("onlyMe")), h("option", { value: "group" }, t("aGroup")),
    h("option", { value: "public" }, t("everyone")));
  const group = h("input", { name: "group", autocomplete: "off" });
  const groupField = field(t("groupToken"), group);
  groupField.hidden = true;
  visibility.addEventListener("change", () => { groupField.hidden = visibility.value !== "group"; });
  const start = h("button", { type: "submit" }, t("startJob"));
  const message = status();
  const bar = h("progress", { max: 100, value: 0, "aria-label": t("progress") });
  const figures = h("p", { class: "figures", "aria-live": "polite" });
  const errors = h("ul", { class: "errors" });
  const form = h("form", { class: "card" },
    field(t("files"), files), field(t("whoMayRead"), visibility), groupField, field(t("fieldsJson"), fields),
    field(t("workflowId"), workflow), start, message);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = new FormData();
    for (const file of files.files) body.append("files", file, file.name);
    if (fields.value.trim()) body.append("fields", fields.value.trim());
    if (workflow.value.trim()) body.append("workflow", workflow.value.trim());
    body.append("visibility", visibility.value === "group" ? `group:${group.value.trim()}` : visibility.value);
    const auth = headers();
    delete auth["Content-Type"]; // the browser writes the multipart boundary
    start.disabled = true;
    try {
      const response = await fetch(`${PREFIX}/index/jobs`, { method: "POST", headers: auth, body });
      const json = await response.json();
      if (json.status !== "OK") throw refusal(json, response.status);
      const show = (job) => {
        bar.value = job.percent ?? 0;
        figures.textContent = `${job.status} · ${job.percent ?? 0}% · ${t("documents")}: ${job.documents}/${job.total}`
          + ` · ${t("chunks")}: ${job.chunks ?? "Solr"} · ${t("failures")}: ${job.failed}`;
        errors.replaceChildren(...job.errors.map((e) => h("li", {}, e)));
      };
      show(json.content.job);
      await readEvents(`/index/jobs/${json.content.job.id}/events`, (name, job) => show(job));
      message.show(t("jobDone"));
    } catch (error) {
      message.fail(error);
    } finally { start.disabled = false; }
  });
  main.append(h("h1", {}, t("indexing")), form,
    h("section", { class: "card", "aria-label": t("progress") }, bar, figures, errors));
}
