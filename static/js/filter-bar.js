// The filter bar's two behaviours, on every page that has one (templates/dashboard/
// _filter_fields.html, templates/_choose_many.html; also a page's own form with a range):
//
// 1. A preset range disables the From and Until inputs, so that the form never sends times
//    beside a preset: dashboard.filters refuses both rather than silently reading one.
//    Picking "Custom range" enables them, filled with the range shown.
// 2. Each select[data-choose-many] becomes a Tom Select (served from our static files,
//    dashboard/staticfiles.py): type to search, arrows and Enter to pick, a chip for each
//    name chosen, Backspace to remove the last. The native select stays underneath and is
//    what the form submits, so without this script the page still works.
(function () {
  "use strict";

  function syncTimes(form) {
    var range = form.querySelector('select[name="range"]');
    var custom = range.value === "custom";
    form.querySelectorAll('input[name="since"], input[name="until"]').forEach(function (input) {
      input.disabled = !custom;
    });
  }

  document.querySelectorAll("form").forEach(function (form) {
    if (!form.querySelector('select[name="range"]')) return;
    syncTimes(form);
    form.addEventListener("change", function (event) {
      if (event.target.name === "range") syncTimes(form);
    });
  });

  if (!window.TomSelect) return;
  document.querySelectorAll("select[data-choose-many]").forEach(function (select) {
    new window.TomSelect(select, {
      plugins: ["remove_button"],
      placeholder: select.dataset.placeholder,
      hidePlaceholder: true,
      // Several names are picked in a row: the list stays open until Escape or Tab, and
      // the search clears for the next name.
      closeAfterSelect: false,
      clearAfterSelect: true,
      maxOptions: null,
    });
  });
})();
