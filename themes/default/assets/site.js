/* review-bundler site behaviour: theme toggle, copy buttons, search.
   Classic deferred script: the site must work from file://, where ES modules
   and fetch() are blocked, and the page CSP forbids inline script. Data from
   the bundle is only ever written with textContent, never innerHTML. */
(function () {
  "use strict";

  var doc = document;
  var html = doc.documentElement;
  var ROOT = html.getAttribute("data-root") || "";
  var STORE_KEY = "rb-theme";
  var MAX_RESULTS = 20;

  /* ---------- theme toggle ---------- */

  function systemDark() {
    return !!(window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches);
  }

  function effectiveTheme() {
    var t = html.getAttribute("data-theme");
    if (t === "light" || t === "dark") return t;
    return systemDark() ? "dark" : "light";
  }

  function syncToggle(button) {
    var dark = effectiveTheme() === "dark";
    button.setAttribute("aria-pressed", dark ? "true" : "false");
    button.setAttribute("title", dark ? "Switch to light mode" : "Switch to dark mode");
  }

  function setupThemeToggle() {
    var button = doc.getElementById("rb-theme-toggle");
    if (!button) return;
    syncToggle(button);
    button.addEventListener("click", function () {
      var next = effectiveTheme() === "dark" ? "light" : "dark";
      html.setAttribute("data-theme", next);
      /* where theme-init.js reads it: this site's own key and folder */
      var store = window.rbThemeStore || { key: STORE_KEY, cookiePath: null };
      try {
        window.localStorage.setItem(store.key, next);
      } catch (e) {
        /* storage unavailable: the cookie below, or this page only */
      }
      if (store.cookiePath) {
        /* what Firefox shares between file:// pages; never sent anywhere: a
           file:// page makes no request that carries it */
        try {
          doc.cookie = STORE_KEY + "=" + next + "; path=" + store.cookiePath +
            "; max-age=31536000; SameSite=Strict";
        } catch (e) {
          /* cookies refused to this page: storage alone */
        }
      }
      syncToggle(button);
    });
    if (window.matchMedia) {
      var mq = window.matchMedia("(prefers-color-scheme: dark)");
      var onChange = function () { syncToggle(button); };
      if (mq.addEventListener) mq.addEventListener("change", onChange);
    }
  }

  /* ---------- live region for short announcements ---------- */

  var liveRegion = null;
  function announce(text) {
    if (!liveRegion) {
      liveRegion = doc.createElement("div");
      liveRegion.className = "visually-hidden";
      liveRegion.setAttribute("role", "status");
      liveRegion.setAttribute("aria-live", "polite");
      doc.body.appendChild(liveRegion);
    }
    liveRegion.textContent = "";
    window.setTimeout(function () { liveRegion.textContent = text; }, 30);
  }

  /* ---------- copy buttons ---------- */

  function fallbackCopy(text) {
    var area = doc.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "rb-copy-buffer";
    doc.body.appendChild(area);
    area.select();
    var ok = false;
    try {
      ok = doc.execCommand("copy");
    } catch (e) {
      ok = false;
    }
    doc.body.removeChild(area);
    return ok;
  }

  function flash(button, text) {
    if (!button.hasAttribute("data-label")) {
      button.setAttribute("data-label", button.textContent);
    }
    button.textContent = text;
    announce(text);
    window.clearTimeout(button._rbTimer);
    button._rbTimer = window.setTimeout(function () {
      button.textContent = button.getAttribute("data-label");
    }, 1600);
  }

  function copyFrom(button) {
    var target = doc.getElementById(button.getAttribute("data-copy") || "");
    if (!target) return;
    var text = target.textContent || "";
    var done = function () { flash(button, "Copied"); };
    var fail = function () {
      if (fallbackCopy(text)) done(); else flash(button, "Copy failed");
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(done, fail);
    } else {
      fail();
    }
  }

  function setupCopyButtons() {
    doc.addEventListener("click", function (event) {
      var el = event.target;
      while (el && el !== doc && !(el.classList && el.classList.contains("rb-copy"))) {
        el = el.parentNode;
      }
      if (el && el !== doc) {
        event.preventDefault();
        copyFrom(el);
      }
    });
  }

  /* ---------- search ---------- */

  var UNSAFE_URL = /^(?:[a-z][a-z0-9+.\-]*:|[\/\\])/i;

  var KIND_BOOST = { claim: 3, artifact: 2 };

  function setupSearch() {
    var input = doc.getElementById("rb-search");
    var list = doc.getElementById("rb-search-results");
    if (!input || !list) return;
    var panel = list.parentNode.classList.contains("rb-search-panel") ? list.parentNode : list;
    var status = doc.getElementById("rb-search-status");
    var box = input.closest(".rb-search") || input.parentNode;
    var state = "idle"; /* idle | loading | ready | failed */
    var index = null;
    var active = -1;

    function setStatus(text) {
      if (status) status.textContent = text;
    }

    function options() {
      return list.querySelectorAll("[role=option]");
    }

    function open() {
      panel.hidden = false;
      input.setAttribute("aria-expanded", "true");
    }

    function close() {
      panel.hidden = true;
      input.setAttribute("aria-expanded", "false");
      input.removeAttribute("aria-activedescendant");
      active = -1;
    }

    function setActive(i) {
      var opts = options();
      if (!opts.length) return;
      if (active >= 0 && opts[active]) {
        opts[active].setAttribute("aria-selected", "false");
      }
      active = (i + opts.length) % opts.length;
      var opt = opts[active];
      opt.setAttribute("aria-selected", "true");
      input.setAttribute("aria-activedescendant", opt.id);
      if (opt.scrollIntoView) opt.scrollIntoView({ block: "nearest" });
    }

    function render(results) {
      while (list.firstChild) list.removeChild(list.firstChild);
      active = -1;
      input.removeAttribute("aria-activedescendant");
      var usable = results.filter(function (r) {
        return typeof r.u === "string" && r.u !== "" && !UNSAFE_URL.test(r.u);
      });
      var shown = 0;
      for (var i = 0; i < usable.length && shown < MAX_RESULTS; i++) {
        var r = usable[i];
        var url = r.u;
        var a = doc.createElement("a");
        a.id = "rb-search-option-" + shown;
        a.className = "rb-result";
        a.setAttribute("role", "option");
        a.setAttribute("aria-selected", "false");
        a.setAttribute("tabindex", "-1");
        a.href = ROOT + url;
        var kind = doc.createElement("span");
        kind.className = "rb-result-kind kind-" + String(r.k || "page").replace(/[^a-z_-]/gi, "");
        kind.textContent = String(r.k || "page");
        var title = doc.createElement("span");
        title.className = "rb-result-title";
        title.textContent = String(r.t || r.id);
        a.appendChild(kind);
        a.appendChild(title);
        list.appendChild(a);
        shown++;
      }
      var total = usable.length;
      if (total === 0) {
        setStatus("No results");
      } else if (total > shown) {
        setStatus(total + " results, showing the first " + shown);
      } else {
        setStatus(total === 1 ? "1 result" : total + " results");
      }
    }

    function run() {
      var q = input.value.trim();
      if (!q) {
        while (list.firstChild) list.removeChild(list.firstChild);
        setStatus("");
        close();
        return;
      }
      open();
      if (state === "failed") {
        setStatus("Search is unavailable: its data files could not be loaded.");
        return;
      }
      if (state !== "ready") {
        /* text can arrive with no focus event first (a window that is not focused,
           a field the browser restored): the first input starts the loading too */
        load();
        setStatus("Loading search…");
        return;
      }
      render(index.search(q));
    }

    function buildIndex() {
      var docs = window.RB_SEARCH_DOCS;
      if (!window.MiniSearch || !Array.isArray(docs)) {
        state = "failed";
        run();
        return;
      }
      index = new window.MiniSearch({
        idField: "id",
        fields: ["t", "x"],
        storeFields: ["t", "k", "u"],
        searchOptions: {
          prefix: true, fuzzy: 0.2, boost: { t: 2 },
          /* A reviewer looks for claims and artifacts: the many events that merely
             name one ("edge ...:claim:peak-CO") had pushed the claim itself off the
             first 20 results. */
          boostDocument: function (id, term, stored) {
            return KIND_BOOST[stored && stored.k] || 1;
          }
        }
      });
      for (var i = 0; i < docs.length; i++) {
        var d = docs[i];
        if (d && typeof d.id === "string" && !index.has(d.id)) index.add(d);
      }
      state = "ready";
      run();
    }

    function loadScript(src, onload) {
      var s = doc.createElement("script");
      s.src = src;
      s.async = false;
      s.onload = onload;
      s.onerror = function () {
        state = "failed";
        run();
      };
      doc.head.appendChild(s);
    }

    function load() {
      if (state !== "idle") return;
      state = "loading";
      var afterLib = function () { loadScript(ROOT + "search/docs.js", buildIndex); };
      if (window.MiniSearch) afterLib();
      else loadScript(ROOT + "assets/vendor/minisearch.min.js", afterLib);
    }

    input.addEventListener("focus", load);
    input.addEventListener("input", run);
    input.addEventListener("keydown", function (event) {
      var key = event.key;
      if (key === "ArrowDown" || key === "ArrowUp") {
        if (panel.hidden && input.value.trim()) run();
        if (options().length) {
          event.preventDefault();
          setActive(active + (key === "ArrowDown" ? 1 : -1));
        }
      } else if (key === "Enter") {
        var opts = options();
        var chosen = active >= 0 ? opts[active] : opts[0];
        if (chosen && !panel.hidden) {
          event.preventDefault();
          window.location.href = chosen.href;
        }
      } else if (key === "Escape") {
        if (!panel.hidden) {
          event.preventDefault();
          close();
        } else if (input.value) {
          event.preventDefault();
          input.value = "";
          run();
        }
      }
    });
    box.addEventListener("focusout", function (event) {
      if (!event.relatedTarget || !box.contains(event.relatedTarget)) close();
    });
    input.addEventListener("focus", function () {
      if (input.value.trim() && state === "ready") run();
    });
    list.addEventListener("mousedown", function (event) {
      /* keep focus in the input so focusout does not close the list mid-click */
      event.preventDefault();
    });

    doc.addEventListener("keydown", function (event) {
      if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
      var t = event.target;
      var tag = t && t.tagName ? t.tagName.toLowerCase() : "";
      if (tag === "input" || tag === "textarea" || tag === "select" || (t && t.isContentEditable)) {
        return;
      }
      event.preventDefault();
      input.focus();
    });
  }

  /* ---------- print: show collapsed details, then restore ---------- */

  function setupPrint() {
    var opened = [];
    window.addEventListener("beforeprint", function () {
      var all = doc.querySelectorAll("details:not([open])");
      for (var i = 0; i < all.length; i++) {
        all[i].open = true;
        opened.push(all[i]);
      }
    });
    window.addEventListener("afterprint", function () {
      while (opened.length) opened.pop().open = false;
    });
  }

  /* ---------- keyboard access to scrolling blocks ---------- */

  /* A block that scrolls sideways (wide table, long proof line, big graph)
     must be reachable by keyboard to be scrolled (WCAG 2.1.1). Only blocks
     that actually overflow get tabindex, so the tab order stays short. */
  var SCROLLERS = "pre, .table-wrap, figure.graph, .graph-scroll, .json, .markdown-body table";

  /* Every size is read before any mark is written: a write between two reads
     makes the browser lay the page out again for the second one, and a long
     page of the log holds hundreds of blocks. */
  function markScrollers() {
    var all = doc.querySelectorAll(SCROLLERS);
    var found = [];
    var i;
    for (i = 0; i < all.length; i++) {
      var el = all[i];
      found.push([el, el.scrollWidth > el.clientWidth + 1 ||
                      el.scrollHeight > el.clientHeight + 1, edgesOf(el)]);
    }
    for (i = 0; i < found.length; i++) {
      var block = found[i][0];
      var scrolls = found[i][1];
      if (scrolls && !block.hasAttribute("tabindex")) {
        block.setAttribute("tabindex", "0");
        block.setAttribute("data-rb-scroll", "");
      } else if (!scrolls && block.hasAttribute("data-rb-scroll")) {
        block.removeAttribute("tabindex");
        block.removeAttribute("data-rb-scroll");
      }
      markEdges(block, found[i][2]);
    }
  }

  /* The edges a block goes on past: "left", "right", both or "". */
  function edgesOf(el) {
    var more = [];
    if (el.scrollLeft > 1) more.push("left");
    if (el.scrollLeft + el.clientWidth < el.scrollWidth - 1) more.push("right");
    return more.join(" ");
  }

  /* Marks the edges a block goes on past (data-rb-more="left right") for the
     stylesheet to fade: overlay scrollbars (macOS, phones) show nothing until
     a block is scrolled, so a table or graph cut at the page's edge looked
     whole. */
  function markEdges(el, now) {
    if (now && el.getAttribute("data-rb-more") !== now) {
      el.setAttribute("data-rb-more", now);
    } else if (!now && el.hasAttribute("data-rb-more")) {
      el.removeAttribute("data-rb-more");
    }
  }

  function setupScrollers() {
    markScrollers();
    /* One listener for every block: "scroll" does not bubble, but it can be
       caught on its way down. */
    doc.addEventListener("scroll", function (e) {
      var el = e.target;
      if (el.nodeType === 1 && el.matches(SCROLLERS)) markEdges(el, edgesOf(el));
    }, { capture: true, passive: true });
    var timer = 0;
    window.addEventListener("resize", function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(markScrollers, 150);
    });
  }

  setupThemeToggle();
  setupPrint();
  setupScrollers();
  setupCopyButtons();
  setupSearch();
})();
