// The Share buttons: the browser's own share sheet (the Web Share API) where it has one, the
// page's link copied otherwise (or when the share sheet fails for another reason than a cancel).

import { copy, t } from "./common.js";

async function copyLink(url, status) {
  try {
    await copy(url);
    status.textContent = t("copied");
  } catch {
    status.textContent = t("copy_failed");
  }
}

for (const button of document.querySelectorAll("[data-share-link]")) {
  const status = button.closest("[data-share]").querySelector("[data-copy-status]");
  button.addEventListener("click", async () => {
    const url = button.dataset.shareLink || window.location.href;
    if (typeof navigator.share === "function") {
      try {
        await navigator.share({ title: button.dataset.shareTitle || document.title, url });
        return;
      } catch (error) {
        if (error && error.name === "AbortError") return; // the reader closed the share sheet
      }
    }
    await copyLink(url, status);
  });
}
