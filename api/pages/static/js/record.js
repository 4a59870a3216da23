// The record page: bring the replay viewer to life at the step the page shows (its address
// follows each step: ?step=N), fetching the positions one window of the log at a time.

import { fetchJSON, t } from "./common.js";
import { ReplayViewer } from "./replay.js";

const holder = document.querySelector("[data-record]");
if (holder) {
  const root = holder.querySelector("[data-viewer]");
  const load = (step) => {
    const url = new URL(holder.dataset.frames, window.location.href);
    url.searchParams.set("step", String(step));
    return fetchJSON(url.pathname + url.search);
  };
  const viewer = new ReplayViewer(root, { load, syncUrl: true, shareUrl: holder.dataset.shareUrl, links: true });
  viewer.start().catch(() => {
    root.querySelector("[data-status]").textContent = t("load_failed");
  });
}
