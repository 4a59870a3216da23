// Fill each leaderboard table ([data-leaderboard]) from GET /leaderboard of the REST API.

import { api, el, fetchJSON, pageUrl, t } from "./common.js";

function message(body, text, columns) {
  body.replaceChildren(el("tr", { class: "placeholder-row" }, el("td", { colspan: columns }, text)));
}

async function fill(section) {
  const body = section.querySelector("tbody");
  const code = section.dataset.code;
  const columns = section.querySelectorAll("thead th").length;
  const query = new URLSearchParams({ variant: section.dataset.variant, limit: "10" });
  if (code) query.set("code", code);
  try {
    const board = await fetchJSON(`${api}/leaderboard?${query}`);
    if (!board.entries.length) {
      message(body, t("no_records"), columns);
      return;
    }
    body.replaceChildren(...board.entries.map((entry) => el("tr", {},
      el("td", { class: "num" }, String(entry.rank)),
      el("td", { class: "player" }, el("a", { href: pageUrl(`/records/${entry.record_id}`) }, entry.player)),
      code ? null : el("td", {}, el("a", { href: pageUrl(`/deals/${encodeURIComponent(entry.code)}`) }, entry.code)),
      el("td", { class: "num" }, String(entry.score)),
      el("td", { class: "num" }, String(entry.moves)),
      el("td", {}, entry.won ? el("span", { class: "won-mark" }, `★ ${t("won")}`) : t("not_won")),
    )));
  } catch (error) {
    message(body, t("load_failed", { reason: error.message }), columns);
  }
}

document.querySelectorAll("[data-leaderboard]").forEach(fill);
