/* review-bundler theme init: runs before first paint (not deferred) so a
   stored light/dark choice never flashes the other theme. No stored choice
   means the stylesheet follows prefers-color-scheme.
   Where the choice is kept: localStorage, and on file:// a cookie too, which
   comes first. Firefox gives each file:// page a storage of its own, so a
   choice kept there alone would hold on one page only; its file:// cookies are
   shared by every page below the cookie's path (Chromium keeps none on file://,
   but shares storage).
   On file:// the choice belongs to this site's folder: the cookie's path is that
   folder and the storage key names it, so another site opened from the same disk
   keeps its own choice, and other local files do not see this one. Over HTTP(S)
   the origin already scopes storage, and no cookie is written.
   window.rbThemeStore tells site.js (the toggle) where to write. */
(function () {
  var root = document.documentElement;
  root.className += (root.className ? " " : "") + "js";
  var local = window.location.protocol === "file:";
  var store = { key: "rb-theme", cookiePath: null };
  if (local) {
    var path = "/";
    try {
      path = new URL(root.getAttribute("data-root") || "./", window.location.href).pathname;
    } catch (e) {
      /* no URL parser: the whole disk */
    }
    var cut = path.indexOf(";");  /* would end the cookie attribute: the folder before */
    if (cut >= 0) path = path.slice(0, path.lastIndexOf("/", cut) + 1);
    if (path.charAt(0) !== "/") path = "/";
    store = { key: "rb-theme:" + path, cookiePath: path };
  }
  window.rbThemeStore = store;
  var stored = null;
  if (local) {
    try {
      /* with cookies for several paths the browser lists the longest first */
      var found = /(?:^|;\s*)rb-theme=(light|dark)(?:;|$)/.exec(document.cookie || "");
      if (found) stored = found[1];
    } catch (e) {
      /* cookies refused to this page (an opaque origin): storage below */
    }
  }
  if (stored === null) {
    try {
      stored = window.localStorage.getItem(store.key);
    } catch (e) {
      /* storage disabled (privacy mode, file:// policy): follow the system */
    }
  }
  if (stored === "light" || stored === "dark") {
    root.dataset.theme = stored;
  }
})();
