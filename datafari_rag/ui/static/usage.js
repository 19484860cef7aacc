// Token statistics and the ratings of answers: mine, or everyone's for an administrator (GET usage,
// GET feedback).

import { api } from "./api.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";

const COLUMNS = ["day", "username", "conversation_id", "model", "answers", "prompt_tokens", "completion_tokens", "total_tokens"];
const HEADINGS = ["day", "user", "conversation", "model", "answers", "promptTokens", "completionTokens", "totalTokens"];

export async function usageView(main) {
  const { usage, totals } = await api("/usage");
  const table = h("table", { class: "usage" },
    h("caption", {}, t("usage")),
    h("thead", {}, h("tr", {}, ...HEADINGS.map((k) => h("th", { scope: "col" }, t(k))))),
    h("tbody", {}, ...usage.map((row) => h("tr", {}, ...COLUMNS.map((k) => h("td", {}, row[k]))))),
    h("tfoot", {}, h("tr", {}, h("th", { scope: "row", colspan: 4 }, t("total")),
      ...["answers", "prompt_tokens", "completion_tokens", "total_tokens"].map((k) => h("td", { class: "total" }, totals[k])))));
  const { feedback, totals: rated } = await api("/feedback");
  const ratings = h("section", { class: "card", "aria-labelledby": "ratings-title" },
    h("h2", { id: "ratings-title" }, t("ratings")),
    h("p", { class: "rating-totals" }, `✓ ${rated.up} ${t("ratedUp")} · ✗ ${rated.down} ${t("ratedDown")}`),
    h("table", { class: "usage" },
      h("thead", {}, h("tr", {}, ...["day", "user", "question", "rating", "comment"].map((k) => h("th", { scope: "col" }, t(k))))),
      h("tbody", {}, ...feedback.map((f) => h("tr", {}, h("td", {}, f.updated_at.slice(0, 10)), h("td", {}, f.username),
        h("td", {}, f.question), h("td", {}, f.rating === "up" ? `✓ ${t("goodAnswer")}` : `✗ ${t("badAnswer")}`),
        h("td", {}, f.comment))))));
  main.append(h("h1", {}, t("usage")), table, ratings);
}
