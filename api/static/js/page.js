// On every page: the copy buttons (the page's address, a game code) and times in the
// reader's own time zone (the server writes them in UTC).

import { el, lang, t } from "./common.js";

/** Put `text` on the clipboard: the Clipboard API, or (outside secure contexts) a selected field. */
async function copy(text) {
  if (navigator.clipboard) return navigator.clipboard.writeText(text);
  const field = el("textarea", { class: "visually-hidden", readonly: true });
  field.value = text;
  document.body.append(field);
  field.select();
  const done = document.execCommand("copy");
  field.remove();
  if (!done) throw new Error("copy refused");
}

for (const box of document.querySelectorAll("[data-share]")) {
  const status = box.querySelector("[data-copy-status]");
  for (const button of box.querySelectorAll("[data-copy-link], [data-copy-text]")) {
    button.addEventListener("click", async () => {
      const text = button.hasAttribute("data-copy-link") ? window.location.href : button.dataset.copyText;
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
