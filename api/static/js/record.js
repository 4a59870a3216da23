// The record page: fetch the positions after each action and bring the replay viewer to life
// at the step the page shows (its address follows each step: ?step=N).

import { fetchJSON, t } from "./common.js";
import { ReplayViewer } from "./replay.js";

const holder = document.querySelector("[data-record]");
if (holder) {
  const root = holder.querySelector("[data-viewer]");
  const viewer = new ReplayViewer(root, { syncUrl: true });
  fetchJSON(holder.dataset.frames)
    .then((data) => viewer.load(data.frames))
    .catch((error) => {
      root.querySelector("[data-status]").textContent = error.status === 422 ? t("replay_too_long") : t("load_failed");
    });
}
