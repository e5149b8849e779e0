// Keyboard shortcuts for the queue and review pages, and what happens after the review
// page's htmx requests. Plain script: no build step, no framework beyond htmx.
//
// The server's answers are untrusted text here: they reach the page through textContent only.
(function () {
  "use strict";

  const TYPING = "input, textarea, select, [contenteditable]";
  let held = document.querySelector("[data-held-item]") !== null;
  let deciding = false;

  function say(id, text) {
    const element = document.getElementById(id);
    if (element) element.textContent = text;
  }

  // The rubric's scores as the API takes them: a number, a choice, or true or false, by
  // dimension name; a dimension left unscored is left out (the server says if it was needed).
  function rubricScores(form) {
    const scores = {};
    form.querySelectorAll("fieldset[data-dimension]").forEach((fieldset) => {
      const name = fieldset.dataset.dimension;
      const kind = fieldset.dataset.kind;
      if (kind === "numeric") {
        const value = fieldset.querySelector("input").value.trim();
        if (value !== "") scores[name] = Number(value);
        return;
      }
      const picked = fieldset.querySelector("input:checked");
      if (picked) scores[name] = kind === "boolean" ? picked.value === "true" : picked.value;
    });
    return scores;
  }

  // The rubric is never sent alone (Enter in a score would reload the page with it).
  document.addEventListener("submit", (event) => {
    if (event.target.id === "rubric-form") event.preventDefault();
  });

  // A decision carries the rubric's scores and the version they were given against.
  document.addEventListener("htmx:configRequest", (event) => {
    const rubric = document.getElementById("rubric-form");
    if (!rubric || !event.detail.elt.matches("form[data-decision]")) return;
    event.detail.parameters.scores = JSON.stringify(rubricScores(rubric));
    event.detail.parameters.rubric_version = rubric.dataset.rubricVersion;
  });

  // A refused score (the API names it "scores.<dimension>"): said with the dimension's label,
  // and the focus goes to it.
  function scoreRefused(body) {
    const rubric = document.getElementById("rubric-form");
    if (!rubric || !body || typeof body !== "object") return null;
    const field = Object.keys(body).find((key) => key.startsWith("scores."));
    if (!field) return null;
    const fieldset = rubric.querySelector(
      'fieldset[data-dimension="' + CSS.escape(field.slice("scores.".length)) + '"]'
    );
    if (!fieldset) return null;
    const control = fieldset.querySelector("input:checked") || fieldset.querySelector("input");
    if (control) control.focus();
    return fieldset.dataset.label + ": " + [].concat(body[field]).join(" ");
  }

  // The API answers {"detail": "…"} or {"field": ["…", …]}.
  function errorMessage(xhr) {
    if (!xhr || xhr.status === 0) return "Gatehouse could not be reached; nothing was saved.";
    let body = null;
    try {
      body = JSON.parse(xhr.responseText);
    } catch (_) {
      return "The server answered " + xhr.status + ".";
    }
    if (body && typeof body.detail === "string") return body.detail;
    const refusedScore = scoreRefused(body);
    if (refusedScore) return refusedScore;
    if (body && typeof body === "object") {
      return Object.entries(body)
        .map(([field, messages]) => field + ": " + [].concat(messages).join(" "))
        .join(" ");
    }
    return "The server answered " + xhr.status + ".";
  }

  // Each item starts at its heading, so that a screen reader names it and Tab goes on from
  // there; the decision shortcuts work from anywhere on the page.
  const title = document.getElementById("item-title");
  if (title) title.focus();

  // Nothing is held any more: the next-item button (n) becomes usable.
  function letGo() {
    held = false;
    document.querySelectorAll("[data-after-release]").forEach((button) => {
      button.disabled = false;
    });
  }

  function loadNextItem() {
    document.querySelectorAll("[data-decision] button, button[data-decision]").forEach((button) => {
      button.disabled = true;
    });
    say("decision-status", "Saved. Loading the next item…");
    const next = document.getElementById("next-form");
    if (next) next.submit();
  }

  // An approval waits for its undo window (data-undo-seconds) before htmx sends it: until
  // then nothing is recorded, u undoes it and a sends it at once. A page closed within the
  // window sends nothing, and the claim lapses back to the queue.
  let pendingApproval = null;

  function undoButton() {
    return document.getElementById("undo-approve");
  }

  function approvalSend() {
    if (!pendingApproval) return;
    const { timer, send } = pendingApproval;
    clearTimeout(timer);
    pendingApproval = null;
    undoButton().hidden = true;
    send();
  }

  function approvalUndo() {
    if (!pendingApproval) return;
    clearTimeout(pendingApproval.timer);
    pendingApproval = null;
    undoButton().hidden = true;
    say("decision-status", "Approval undone: nothing was sent.");
    document.querySelector("#approve-form button[type=submit]").focus();
  }

  document.addEventListener("htmx:confirm", (event) => {
    const form = event.detail.elt;
    if (!form.matches("[data-undo-seconds]")) return;
    const seconds = Number(form.dataset.undoSeconds);
    if (!(seconds > 0)) return;
    event.preventDefault();
    if (pendingApproval) {
      approvalSend(); // a second a: no need to wait
      return;
    }
    pendingApproval = {
      timer: setTimeout(approvalSend, seconds * 1000),
      send: () => event.detail.issueRequest(true),
    };
    undoButton().hidden = false;
    say("decision-status", "Approving in " + seconds + " s: u to undo, a to send now.");
  });

  document.addEventListener("click", (event) => {
    if (event.target instanceof Element && event.target.closest("#undo-approve")) approvalUndo();
  });

  document.addEventListener("keydown", (event) => {
    const target = event.target instanceof Element ? event.target : null;
    if (target && target.closest(TYPING)) {
      if (event.key === "Escape") target.blur();
      const decision = target.form && target.form.matches("[data-decision]");
      // Enter sends the reject reason chosen; in the edit box it is a new line, so there
      // Ctrl+Enter sends.
      const sends =
        event.key === "Enter" &&
        (event.ctrlKey || event.metaKey || (decision && target.matches("select")));
      if (sends && target.form) {
        event.preventDefault();
        target.form.requestSubmit();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    if (!/^[a-z]$/.test(event.key)) return;
    const control = document.querySelector('[data-key="' + event.key + '"]');
    if (!control || control.disabled) return;
    // Keep the letter itself out of a field that the shortcut focuses.
    event.preventDefault();
    if (control.tagName === "BUTTON") control.click();
    else control.focus();
  });

  document.addEventListener("htmx:beforeRequest", (event) => {
    const source = event.detail.elt;
    if (!source.matches("[data-decision]")) return;
    // One decision at a time: a second key press while the first is on its way is dropped.
    if (deciding || !held) {
      event.preventDefault();
      return;
    }
    deciding = true;
    say("decision-error", "");
  });

  document.addEventListener("htmx:afterRequest", (event) => {
    const source = event.detail.elt;
    const xhr = event.detail.xhr;
    if (source.matches("[data-heartbeat]")) {
      if (!event.detail.successful) {
        say("decision-error", "Your claim on this item lapsed: " + errorMessage(xhr));
        letGo();
      }
      return;
    }
    if (!source.matches("[data-decision]")) return;
    deciding = false;
    if (event.detail.successful) {
      letGo();
      loadNextItem();
      return;
    }
    say("decision-error", errorMessage(xhr));
    // 409: decided already, or the claim went to someone else; either way it is not ours.
    if (xhr && xhr.status === 409) letGo();
  });
})();
