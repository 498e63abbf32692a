// The score sheet is drawn on the server only (templates/_sheet_body.html): after a change the page
// fetches the new body and puts it in place. A reply that arrives after a newer request was sent is
// dropped, so a slow answer never shows an older sheet.

let latest = 0;
const BUSY_ATTEMPTS = 4; // a sheet answered 503 "busy" is asked for again, up to this many times in all
// A sheet not fetched (the server out of reach a moment, or busy) is asked for again this much later, until it comes:
// else the sheet went on showing the match before the change (no round just confirmed, the totals bar's after it).
const RETRY_MS = 4000;

/**
 * Redraw the sheet inside `container` for `match`. `actions` (optional): {onUndo(number), onEdit(number),
 * onRestore(versionId, revision)} (an earlier version of a round put back, as the sheet drawn at `revision` showed it).
 */
export async function renderSheet(container, match, actions = null) {
  const sequence = ++latest;
  const url = `/matches/${encodeURIComponent(match.id)}/sheet-body${actions ? "?actions=1" : ""}`;
  const again = () => new Promise((resolve) => { setTimeout(resolve, RETRY_MS); })
    .then(() => (sequence === latest ? renderSheet(container, match, actions) : undefined));
  let html;
  try {
    // a long match's sheet waits for its turn (503 "busy": web/matches.py long_match_turn): asked again a little
    // later, or the phone kept the sheet without the round just confirmed
    for (let attempt = 1; ; attempt += 1) {
      const response = await fetch(url, { headers: { Accept: "text/html" }, credentials: "same-origin" });
      if (response.status === 503 && attempt < BUSY_ATTEMPTS && sequence === latest) {
        await new Promise((resolve) => setTimeout(resolve, attempt * 1000));
        continue;
      }
      if (response.status === 404) return; // the match is gone: nothing to fetch again
      if (!response.ok) return again();
      html = await response.text();
      break;
    }
  } catch {
    return again(); // the server is gone: keep the sheet shown (the page reports the failed request itself) a while
  }
  if (sequence !== latest) return;
  const focused = container.contains(document.activeElement) ? document.activeElement : null;
  const open = [...container.querySelectorAll("details[data-versions][open]")].map((details) => details.dataset.versions);
  container.replaceChildren(document.createRange().createContextualFragment(html));
  // the earlier versions the players had open stay open
  container.querySelectorAll("details[data-versions]").forEach((details) => {
    details.open = open.includes(details.dataset.versions);
  });
  dressSheet(container, actions, focused);
}

/**
 * Make the sheet drawn in `container` (by the server, with the page or fetched) the page's: its times in the players'
 * own clock, its buttons calling `actions` (as `renderSheet`'s), and the focus back on the button that had it
 * (`focused`, in the sheet drawn before). The table page's first sheet comes with the page: it is dressed, not fetched
 * again.
 */
export function dressSheet(container, actions = null, focused = null) {
  // The times the server wrote in UTC, in the players' own clock, written as the start page writes dates (2026-12-06
  // 09:04: a locale's short date, 12/6/26, reads two ways)
  container.querySelectorAll("time[datetime]").forEach((time) => {
    const at = new Date(time.dateTime);
    const two = (number) => String(number).padStart(2, "0");
    time.textContent = `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())} ${two(at.getHours())}:${two(at.getMinutes())}`;
  });
  if (!actions) return;
  container.querySelectorAll("[data-edit-round]").forEach((button) =>
    button.addEventListener("click", () => actions.onEdit(Number(button.dataset.editRound))));
  container.querySelector("[data-undo-round]")?.addEventListener("click", (event) =>
    actions.onUndo(Number(event.currentTarget.dataset.undoRound)));
  container.querySelectorAll("[data-restore]").forEach((button) =>
    button.addEventListener("click", () => actions.onRestore(Number(button.dataset.restore), Number(button.dataset.revision))));
  // A button of the sheet had the focus (Edit, Undo): the same button drawn anew has it, so a keyboard's next Tab
  // goes on from there rather than from the top of the page. A version put back leaves its list without that button:
  // the list's summary has it, or, where the list is gone (an undone round brought back), the round's Edit.
  const versions = focused?.closest("details[data-versions]")?.dataset.versions;
  const again = focused?.dataset.editRound ? [`[data-edit-round="${focused.dataset.editRound}"]`]
    : focused?.hasAttribute("data-undo-round") ? ["[data-undo-round]"]
    : versions ? [`details[data-versions="${versions}"] > summary`, `[data-edit-round="${versions}"]`] : [];
  again.map((selector) => container.querySelector(selector)).find(Boolean)?.focus({ preventScroll: true });
}

/** A DOM element: `el("p", {class: "hint", text: "…"}, child, …)`; text is never parsed as HTML. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}
