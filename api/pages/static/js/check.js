// The checker: the server shows the verdict and the last legal position; this fetches the
// positions of the legal part, a window of the log at a time, so that the replay viewer can
// step through it.

import { postJSON, t } from "./common.js";
import { ReplayViewer } from "./replay.js";

const box = document.querySelector("[data-check-viewer]");
if (box) {
  const root = box.querySelector("[data-viewer]");
  const load = (step) => postJSON(box.dataset.frames, { code: box.dataset.code, moves: box.dataset.moves, step });
  const viewer = new ReplayViewer(root, { load, shareUrl: box.dataset.shareUrl });
  viewer.start().catch((error) => {
    root.querySelector("[data-status]").textContent = error.status === 422 ? t("replay_too_long") : t("load_failed");
  });
}
