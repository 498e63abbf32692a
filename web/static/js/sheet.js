// The score sheet drawn from a match's JSON (GET /api/matches/<id>): totals with progress bars to the
// target, one line per round, the winner banner, bonuses. Built with DOM calls, never innerHTML, since
// player names are user text.

function el(tag, attrs = {}, ...children) {
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

const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `${n}` : "–");

function roundSummary(line) {
  if (line.draw) return "Draw (no knock)";
  const outcome = { knock: "knock", undercut: "undercut!", gin: "GIN" }[line.outcome] ?? line.outcome;
  return `${line.knocker} · ${outcome} · up ${line.upcard}`;
}

function playerCell(line, name) {
  const cell = el("td");
  const points = line.points?.[name] ?? 0;
  cell.append(el("span", { class: "pts", text: signed(points) }), " ");
  cell.append(el("span", { class: "run-total", text: String(line.totals[name]) }));
  const player = line.players?.[name];
  if (player) {
    let detail = `dw ${player.deadwood_points}`;
    if (player.layoffs.length) detail += `, laid off ${player.layoffs.map((l) => l.card).join(" ")}`;
    cell.append(el("span", { class: "hint", text: detail }));
  }
  return cell;
}

/** Redraw the sheet inside `container`. `actions` (optional): {onUndo(), onEdit(number)}. */
export function renderSheet(container, match, actions = null) {
  const parts = [];
  if (match.winner) {
    let text = `${match.winner} wins the match!`;
    const bonusText = Object.entries(match.bonuses ?? {})
      .filter(([, points]) => points)
      .map(([name, points]) => `${name} +${points}`)
      .join(", ");
    if (bonusText) text += ` Bonuses: ${bonusText}.`;
    parts.push(el("p", { class: "winner-banner", role: "status", text }));
  }
  const totals = el("ul", { class: "totals" });
  for (const name of match.players) {
    const total = match.totals[name];
    const item = el("li", { class: `total${match.winner === name ? " is-winner" : ""}` });
    const label = el("span", { class: "total-name", text: name });
    if (match.dealer === name && !match.finished) label.append(" ", el("span", { class: "badge", title: "deals next", text: "deals" }));
    item.append(label, el("span", { class: "total-points", text: String(total) }));
    item.append(el("progress", { max: match.target, value: Math.max(0, total), "aria-label": `${name}: ${total} of ${match.target}` }));
    if (match.bonuses?.[name]) item.append(el("span", { class: "hint", text: `+${match.bonuses[name]} bonuses` }));
    totals.append(item);
  }
  parts.push(totals);

  const head = el("tr", {}, el("th", { scope: "col", text: "#" }), el("th", { scope: "col", text: "Dealer" }),
    el("th", { scope: "col", text: "Round" }));
  for (const name of match.players) head.append(el("th", { scope: "col", text: name }));
  if (actions) head.append(el("th", { scope: "col", class: "no-print" }, el("span", { class: "visually-hidden", text: "Actions" })));
  const body = el("tbody");
  for (const line of match.rounds) {
    const row = el("tr", { class: `outcome-${line.outcome}` },
      el("th", { scope: "row", text: String(line.number) }), el("td", { text: line.dealer }),
      el("td", { text: roundSummary(line) }));
    for (const name of match.players) row.append(playerCell(line, name));
    if (actions) {
      const edit = el("button", { type: "button", class: "button small", "aria-label": `Edit round ${line.number}`, text: "Edit" });
      edit.addEventListener("click", () => actions.onEdit(line.number));
      row.append(el("td", { class: "no-print" }, edit));
    }
    body.append(row);
  }
  if (!match.rounds.length) {
    body.append(el("tr", {}, el("td", { colspan: 4 + match.players.length, class: "empty-row", text: "No rounds yet." })));
  }
  parts.push(el("div", { class: "table-scroll" }, el("table", { class: "rounds" }, el("thead", {}, head), body)));

  if (actions && match.rounds.length) {
    const undo = el("button", { type: "button", class: "button no-print", id: "undo-round", text: `Undo round ${match.rounds.length}` });
    undo.addEventListener("click", () => actions.onUndo());
    parts.push(el("div", { class: "actions" }, undo));
  }
  container.replaceChildren(...parts);
}

export { el };
