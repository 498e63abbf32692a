// Set-up form: the first-dealer choices show the names typed so far.
const form = document.getElementById("setup-form");
if (form) {
  const inputs = [...form.querySelectorAll('input[name="player"]')];
  const dealer = form.querySelector("#dealer");
  const refresh = () => {
    inputs.forEach((input, index) => {
      const option = dealer.querySelector(`option[value="${index + 1}"]`);
      const name = input.value.trim();
      option.textContent = name || `Player ${index + 1}`;
      option.hidden = index >= 2 && !name;
    });
  };
  inputs.forEach((input) => input.addEventListener("input", refresh));
  refresh();
}

// Each rule set's scoring has its own bonuses: only the chosen one's are shown and sent (the others' would be
// ignored by its scoring, a field changed for nothing).
const preset = document.getElementById("preset");
const showScoringFields = () => {
  const scoring = preset?.selectedOptions[0]?.dataset.scoring;
  document.querySelectorAll(".scoring-fields").forEach((group) => {
    group.hidden = group.dataset.scoring !== scoring;
    group.querySelectorAll("input").forEach((input) => { input.disabled = group.hidden; });
  });
};
preset?.addEventListener("change", showScoringFields);
if (preset) showScoringFields();

// Three or four players play the multi-player rules: switch the rule set when a third name appears.
const third = document.getElementById("player-3");
third?.addEventListener("change", () => {
  if (third.value.trim() && preset.value !== "oklahoma-multi") {
    preset.value = "oklahoma-multi";
    showScoringFields();
  }
});
