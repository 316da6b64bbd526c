/* review-bundler theme init: runs before first paint (not deferred) so a
   stored light/dark choice never flashes the other theme. No stored choice
   means the stylesheet follows prefers-color-scheme. */
(function () {
  var root = document.documentElement;
  root.className += (root.className ? " " : "") + "js";
  try {
    var stored = window.localStorage.getItem("rb-theme");
    if (stored === "light" || stored === "dark") {
      root.dataset.theme = stored;
    }
  } catch (e) {
    /* storage disabled (privacy mode, file:// policy): follow the system */
  }
})();
