/* review-bundler theme init: runs before first paint (not deferred) so a
   stored light/dark choice never flashes the other theme. No stored choice
   means the stylesheet follows prefers-color-scheme.
   Where the choice is kept: localStorage, and on file:// a cookie too, which
   comes first. Firefox gives each file:// page a storage of its own, so a
   choice kept there alone would hold on one page only; its file:// cookies are
   shared by every page (Chromium keeps none on file://, but shares storage). */
(function () {
  var root = document.documentElement;
  root.className += (root.className ? " " : "") + "js";
  var stored = null;
  if (window.location.protocol === "file:") {
    try {
      var found = /(?:^|;\s*)rb-theme=(light|dark)(?:;|$)/.exec(document.cookie || "");
      if (found) stored = found[1];
    } catch (e) {
      /* cookies refused to this page (an opaque origin): storage below */
    }
  }
  if (stored === null) {
    try {
      stored = window.localStorage.getItem("rb-theme");
    } catch (e) {
      /* storage disabled (privacy mode, file:// policy): follow the system */
    }
  }
  if (stored === "light" || stored === "dark") {
    root.dataset.theme = stored;
  }
})();
