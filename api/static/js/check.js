// The checker: POST the code and the log to /verify of the REST API, show the verdict
// (the rule sentence comes translated, by Accept-Language), then replay the legal part
// with the failing action marked in the log.

import { api, el, fetchJSON, postJSON, t } from "./common.js";
import { ReplayViewer } from "./replay.js";

const form = document.querySelector("[data-checker]");
const codeInput = form.querySelector("[name=code]");
const movesInput = form.querySelector("[name=moves]");
const verdictBox = document.querySelector("[data-verdict]");
const errorBox = document.querySelector("[data-check-error]");
const viewerBox = document.querySelector("[data-check-viewer]");
const viewer = new ReplayViewer(viewerBox.querySelector("[data-viewer]"));

function showError(text, field) {
  errorBox.textContent = text;
  errorBox.hidden = false;
  verdictBox.hidden = true;
  viewerBox.hidden = true;
  if (field) {
    field.setAttribute("aria-invalid", "true");
    field.focus();
  }
}

function fact(name, value) {
  return el("div", {}, el("dt", {}, t(name)), el("dd", {}, String(value)));
}

function showVerdict(verdict) {
  const error = verdict.error;
  verdictBox.classList.toggle("is-illegal", !verdict.legal);
  verdictBox.classList.toggle("is-mismatch", verdict.legal && !verdict.verified);
  verdictBox.querySelector("[data-verdict-heading]").textContent = verdict.legal ? `✓ ${t("legal")}` : `✗ ${t("illegal")}`;
  verdictBox.querySelector("[data-verdict-summary]").textContent = verdict.legal
    ? (verdict.verified ? t("verified") : t("claims_mismatch"))
    : "";
  const ruleBox = verdictBox.querySelector("[data-rule-error]");
  ruleBox.hidden = !error;
  ruleBox.replaceChildren();
  if (error) {
    const head = t(error.kind === "syntax" ? "syntax_error" : "breaks_rule",
      { number: error.index + 1, action: error.action, rule: error.rule });
    ruleBox.append(
      el("p", {}, el("strong", {}, head)),
      el("p", { class: "rule-message" }, error.message),
      el("p", {}, t("not_played")),
    );
  }
  verdictBox.querySelector("[data-verdict-facts]").replaceChildren(
    fact("result", verdict.won ? t("won") : t("not_won")),
    fact("score", verdict.score),
    fact("moves", verdict.moves),
    fact("actions", verdict.actions),
    fact("undos", verdict.undos),
    fact("takebacks", verdict.takebacks),
    fact("foundation_cards", verdict.foundation_cards),
  );
  const claims = verdictBox.querySelector("[data-claims]");
  const entries = Object.entries(verdict.claims || {});
  claims.hidden = !entries.length;
  claims.replaceChildren(...entries.map(([name, claim]) => el("li", { class: claim.match ? "match" : "mismatch" },
    t("claim", { name: t(name), claimed: claim.claimed, actual: claim.actual }))));
  verdictBox.hidden = false;
  verdictBox.focus();
}

async function showReplay(verdict) {
  const status = viewerBox.querySelector("[data-status]");
  try {
    const data = await postJSON(form.dataset.frames, { code: verdict.code, moves: verdict.canonical });
    viewer.load({ frames: data.frames, failing: verdict.error });
    viewer.go(viewer.total);
  } catch (error) {
    status.textContent = error.status === 422 ? t("replay_too_long") : t("load_failed", { reason: error.message });
  }
  viewerBox.hidden = false;
}

async function check(event) {
  event?.preventDefault();
  errorBox.hidden = true;
  viewerBox.hidden = true; // until the new replay is there
  codeInput.removeAttribute("aria-invalid");
  movesInput.removeAttribute("aria-invalid");
  const code = codeInput.value.trim();
  const moves = movesInput.value;
  if (!code) return showError(t("need_code"), codeInput);
  if (!moves.trim()) return showError(t("need_log"), movesInput);
  let verdict;
  try {
    verdict = await postJSON(`${api}/verify`, { code, moves });
  } catch (error) {
    const field = error.body?.errors?.[0]?.field === "code" ? codeInput : null;
    return showError(error.message, field);
  }
  showVerdict(verdict);
  await showReplay(verdict);
}

form.addEventListener("submit", check);
if (codeInput.value.trim() && movesInput.value.trim()) check();
