// A card whose content is wider than the screen (a wide table at 390 px) scrolls sideways
// inside itself, never the page. A keyboard user scrolls it with the arrow keys once it has
// the focus, so each card that overflows is made a focusable, named region; one that fits
// is left out of the tab order. Runs on load, on resize and after every htmx swap.
(function () {
  "use strict";

  function mark() {
    document.querySelectorAll(".card").forEach((card) => {
      if (card.scrollWidth > card.clientWidth + 1) {
        if (!card.hasAttribute("tabindex")) {
          card.setAttribute("tabindex", "0");
          card.setAttribute("role", "region");
          if (!card.hasAttribute("aria-labelledby") && !card.hasAttribute("aria-label")) {
            const heading = card.querySelector("h1, h2, h3");
            card.setAttribute("aria-label", heading ? heading.textContent.trim() : "Table");
            card.dataset.scrollLabel = "";
          }
          card.dataset.scrollRegion = "";
        }
      } else if ("scrollRegion" in card.dataset) {
        card.removeAttribute("tabindex");
        card.removeAttribute("role");
        if ("scrollLabel" in card.dataset) card.removeAttribute("aria-label");
        delete card.dataset.scrollRegion;
        delete card.dataset.scrollLabel;
      }
    });
  }

  let pending = null;
  function soon() {
    if (pending) cancelAnimationFrame(pending);
    pending = requestAnimationFrame(mark);
  }
  window.addEventListener("resize", soon);
  document.addEventListener("htmx:afterSettle", soon);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", mark);
  } else {
    mark();
  }
})();
