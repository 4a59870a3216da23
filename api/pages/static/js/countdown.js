// Live countdowns: each <time data-countdown datetime="…"> the server wrote ("Next challenge in
// 3 h 12 min (… UTC)") is written again every 20 seconds from the time left; at zero it says
// that the next challenge is ready.

import { t } from "./common.js";

function left(seconds) {
  const days = Math.floor(seconds / 86400);
  const hours = Math.floor((seconds % 86400) / 3600);
  if (days > 0) return t("left_days", { days, hours });
  return t("left_hours", { hours, minutes: Math.floor((seconds % 3600) / 60) });
}

const clocks = [...document.querySelectorAll("time[data-countdown]")];

function tick() {
  for (const node of clocks) {
    const until = new Date(node.getAttribute("datetime")).getTime();
    if (Number.isNaN(until)) continue;
    const seconds = Math.floor((until - Date.now()) / 1000);
    node.textContent = seconds > 0
      ? t("countdown", { left: left(seconds), time: node.dataset.utc })
      : t("countdown_done");
  }
}

if (clocks.length) {
  tick();
  setInterval(tick, 20_000);
}
