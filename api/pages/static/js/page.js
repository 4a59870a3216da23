// On every page: the copy buttons (the page's link, a game code) and times in the
// reader's own time zone (the server writes them in UTC).

import { copy, lang, t } from "./common.js";

for (const box of document.querySelectorAll("[data-share]")) {
  const status = box.querySelector("[data-copy-status]");
  for (const button of box.querySelectorAll("[data-copy-link], [data-copy-text]")) {
    button.addEventListener("click", async () => {
      // the page's link: the one the page names (a record without its step), else the address
      const text = button.hasAttribute("data-copy-link") ? button.dataset.copyLink || window.location.href
        : button.dataset.copyText;
      try {
        await copy(text);
        status.textContent = t("copied");
      } catch {
        status.textContent = t("copy_failed");
      }
    });
  }
  box.hidden = false;
}

const format = new Intl.DateTimeFormat(lang, {
  year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short",
});
for (const node of document.querySelectorAll("time[data-local-time]")) {
  const when = new Date(node.getAttribute("datetime"));
  if (Number.isNaN(when.getTime())) continue;
  node.title = node.textContent;
  node.textContent = t("local_time", { time: format.format(when) });
}
