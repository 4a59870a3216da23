// Remember the player on the challenge pages (this browser's local storage, nothing sent but the
// links' ?player=): a page opened with ?player= remembers that name; one opened without it is opened
// again with the remembered name (its links then keep it); "Forget my name" forgets it and opens the
// page without it.

const KEY = "solitaire-player";
const box = document.querySelector("[data-visitor]");

function stored() {
  try {
    return window.localStorage.getItem(KEY);
  } catch {
    return null; // storage refused (private mode, settings): nothing is remembered
  }
}

if (box) {
  const url = new URL(window.location.href);
  const shown = box.dataset.visitor;
  const remembered = stored();
  if (shown) {
    try {
      window.localStorage.setItem(KEY, shown);
    } catch {
      // not remembered: the links still carry the name
    }
  } else if (remembered && !url.searchParams.has("player")) {
    url.searchParams.set("player", remembered);
    window.location.replace(url.href);
  }
  const forget = box.querySelector("[data-forget-player]");
  if (forget && stored()) {
    forget.hidden = false;
    forget.addEventListener("click", () => {
      try {
        window.localStorage.removeItem(KEY);
      } catch {
        // nothing to forget
      }
      url.searchParams.delete("player");
      window.location.assign(url.href);
    });
  }
}
