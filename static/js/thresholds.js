// The thresholds page: the what-if's "use these values" fills the settings form with the
// thresholds projected, and a refused save puts the focus on the first field at fault.
(function () {
  "use strict";

  function say(text) {
    const live = document.getElementById("settings-status");
    if (live) live.textContent = text;
  }

  document.addEventListener("click", (event) => {
    const button = event.target instanceof Element && event.target.closest("[data-use-values]");
    if (!button) return;
    const form = button.form;
    const pairs = [
      ["review", "id_review_threshold"],
      ["approve", "id_approve_threshold"],
    ];
    for (const [from, to] of pairs) {
      const source = form.elements.namedItem(from);
      const target = document.getElementById(to);
      if (source && target) target.value = source.value;
    }
    say("The settings now hold these thresholds: say why, and save.");
    const reason = document.getElementById("id_reason");
    if (reason) reason.focus();
  });

  function focusTheFault() {
    const fault = document.querySelector(".settings-form [aria-invalid=true]");
    if (fault) fault.focus();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", focusTheFault);
  } else {
    focusTheFault();
  }
})();
