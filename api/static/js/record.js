// The record page: fetch the positions after each action and start the replay viewer.

import { fetchJSON, t } from "./common.js";
import { ReplayViewer } from "./replay.js";

const holder = document.querySelector("[data-record]");
const root = holder.querySelector("[data-viewer]");
const status = root.querySelector("[data-status]");

status.textContent = t("loading");
fetchJSON(holder.dataset.frames)
  .then((data) => {
    new ReplayViewer(root).load({ frames: data.frames, failing: data.error });
  })
  .catch((error) => {
    status.textContent = error.status === 422 ? t("replay_too_long") : t("load_failed", { reason: error.message });
  });
