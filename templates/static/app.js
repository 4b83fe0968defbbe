// couponsvc pages: the claim buttons (one idempotency key per click, kept for
// a retry when the answer was lost), stock figures and offer states kept
// current, the checkout's keyboard focus, copy buttons, full-screen QR codes
// (see docs/pages.md), and small form helpers. Times are written by the
// server in the deployment's time zone (docs/time.md): a script rewriting them
// in the reader's zone would make a form and the details beside it disagree.
// Pages work without it, except the claim button, which calls the JSON API.
(function () {
  "use strict";

  function csrfToken() {
    var m = document.querySelector('meta[name="csrf-token"]');
    return m ? m.getAttribute("content") : "";
  }

  // newKey makes an idempotency key: 128 random bits in hex. (crypto.randomUUID
  // needs a secure context; getRandomValues works on plain HTTP too.)
  function newKey() {
    var b = new Uint8Array(16);
    window.crypto.getRandomValues(b);
    return Array.prototype.map.call(b, function (x) { return ("0" + x.toString(16)).slice(-2); }).join("");
  }

  // ---- stock figures ----

  function setRemaining(id, remaining) {
    document.querySelectorAll('[data-stock="' + id + '"]').forEach(function (el) {
      var total = parseInt(el.getAttribute("data-total"), 10) || 0;
      var num = el.querySelector("[data-remaining]");
      if (num) { num.textContent = String(remaining); }
      var bar = el.querySelector(".bar-fg");
      if (bar && total > 0) {
        bar.setAttribute("width", String(Math.max(0, Math.min(100, Math.floor(remaining * 100 / total)))));
      }
    });
    if (remaining <= 0) { markSoldOut(id); }
  }

  function markSoldOut(id) { markOffer(id, "sold_out", "state-soldout", "Sold out"); }

  // An offer that left the list since the page was made (paused, closed)
  // takes no claims: its button goes.
  function markClosed(id) { markOffer(id, "closed", "state-closed", "Not open right now"); }

  function markOffer(id, offerState, stateClass, text) {
    var card = document.querySelector('[data-offer="' + id + '"]');
    if (!card) { return; }
    var btn = card.querySelector("[data-claim]");
    if (!btn) { return; }
    card.classList.remove("offer-open");
    card.classList.add("offer-" + offerState);
    var state = document.createElement("span");
    state.className = "state " + stateClass;
    state.setAttribute("data-state", "");
    state.textContent = text;
    btn.replaceWith(state);
  }

  // An offer listed as opening later that the list now has open: a shopper
  // gets its claim button, others the words.
  function markOpened(id) {
    var card = document.querySelector('[data-offer="' + id + '"]');
    var state = card && card.querySelector("[data-opens]");
    if (!state) { return; }
    card.classList.remove("offer-upcoming");
    card.classList.add("offer-open");
    if (!card.hasAttribute("data-can-claim")) {
      state.removeAttribute("data-opens");
      state.textContent = "Open now";
      return;
    }
    var btn = document.createElement("button");
    btn.className = "button primary claim";
    btn.type = "button";
    btn.setAttribute("data-claim", String(id));
    btn.textContent = "Claim";
    btn.addEventListener("click", function () { claim(btn); });
    state.replaceWith(btn);
    if ((parseInt(card.getAttribute("data-held"), 10) || 0) >= (parseInt(card.getAttribute("data-limit"), 10) || 1)) {
      markAtLimit(card);
    }
  }

  function pollStock() {
    var mode = document.body.getAttribute("data-poll");
    if (!mode || !window.fetch) { return; }
    var url = "/api/v1/templates" + (mode === "admin" ? "?all=1" : "");
    setInterval(function () {
      if (document.hidden) { return; }
      fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (body) {
          if (!body || !body.templates) { return; }
          var listed = {};
          body.templates.forEach(function (t) {
            listed[t.id] = true;
            if (typeof t.remaining === "number") { setRemaining(t.id, t.remaining); }
            if (mode === "shop") { markOpened(t.id); }
          });
          if (mode === "shop") {
            document.querySelectorAll("[data-offer]").forEach(function (card) {
              var id = card.getAttribute("data-offer");
              if (!listed[id]) { markClosed(id); }
            });
          }
        })
        .catch(function () { /* try again at the next tick */ });
    }, 5000);
  }

  // ---- claim buttons ----

  function say(out, kind, text, link) {
    out.className = "claim-result " + kind;
    out.textContent = text;
    if (link) {
      out.appendChild(document.createTextNode(" "));
      var a = document.createElement("a");
      a.href = link.href;
      a.textContent = link.text;
      out.appendChild(a);
    }
  }

  // codeGroups writes a coupon code as the pages do: "ABCD-EFGH-JKLMN".
  function codeGroups(code) {
    return code.length === 13 ? code.slice(0, 4) + "-" + code.slice(4, 8) + "-" + code.slice(8) : code;
  }

  // sayClaimed shows the claimed coupon at once: its code with a copy
  // button, its QR code (an image of the shopper's own coupon) and the way to
  // the wallet.
  function sayClaimed(out, text, code) {
    say(out, "ok", text, { href: "/wallet", text: "see your wallet" });
    if (!code) { return; }
    var box = document.createElement("div");
    box.className = "claimed-code";
    var c = document.createElement("span");
    c.className = "code";
    c.setAttribute("data-claimed-code", "");
    c.textContent = codeGroups(code);
    box.appendChild(c);
    var copy = document.createElement("button");
    copy.type = "button";
    copy.className = "button small ghost";
    copy.setAttribute("data-copy", code);
    copy.setAttribute("aria-label", "Copy the code " + codeGroups(code));
    copy.textContent = "Copy";
    copy.addEventListener("click", function () { copyCode(copy); });
    box.appendChild(copy);
    out.appendChild(box);
    var img = document.createElement("img");
    img.className = "claimed-qr";
    img.src = "/wallet/qr/" + encodeURIComponent(code);
    img.alt = "QR code of the coupon code " + codeGroups(code);
    img.width = 160;
    img.height = 160;
    out.appendChild(img);
  }

  // heldOne counts one more coupon of the offer in the shopper's wallet:
  // against the limit (data-held, every claim) and in "You have N"
  // (data-usable, the coupons still to use); at the limit the card says so
  // and its claim button goes.
  function heldOne(card) {
    var held = (parseInt(card.getAttribute("data-held"), 10) || 0) + 1;
    card.setAttribute("data-held", String(held));
    var usable = (parseInt(card.getAttribute("data-usable"), 10) || 0) + 1;
    card.setAttribute("data-usable", String(usable));
    var badge = card.querySelector("[data-held-badge]");
    if (badge) { badge.textContent = "You have " + usable; badge.hidden = false; }
    if (held >= (parseInt(card.getAttribute("data-limit"), 10) || 1)) { markAtLimit(card); }
  }

  // markAtLimit shows that the shopper holds the most they may of an offer.
  function markAtLimit(card) {
    var btn = card.querySelector("[data-claim]");
    if (!btn) { return; }
    var state = document.createElement("span");
    state.className = "state state-held";
    state.setAttribute("data-state", "");
    state.appendChild(document.createTextNode("You have the most you may hold · "));
    var a = document.createElement("a");
    a.href = "/wallet";
    a.textContent = "see your wallet";
    state.appendChild(a);
    btn.replaceWith(state);
  }

  // Answers whose outcome is unknown keep the click's key, so that trying
  // again cannot claim twice; every other answer ends it.
  var retryable = { in_progress: true, busy: true, unavailable: true, internal: true };

  function claim(btn) {
    if (btn.getAttribute("aria-busy") === "true") { return; }
    var id = btn.getAttribute("data-claim");
    var card = btn.closest("[data-offer]");
    var out = card.querySelector("[data-result]");
    if (!btn.dataset.key) { btn.dataset.key = newKey(); }
    var key = btn.dataset.key;
    btn.dataset.lastKey = key; // what this click sent, for support and tests
    btn.setAttribute("aria-busy", "true");
    btn.disabled = true;
    say(out, "info", "Claiming…");
    fetch("/api/v1/templates/" + encodeURIComponent(id) + "/claim", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Idempotency-Key": key, "X-CSRF-Token": csrfToken(), "Accept": "application/json" }
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (body) { return { status: r.status, body: body }; });
    }).then(function (res) {
      var word = res.body.result || (res.status >= 500 ? "internal" : "");
      if (!retryable[word]) { delete btn.dataset.key; }
      btn.removeAttribute("aria-busy");
      btn.disabled = false;
      if (typeof res.body.remaining === "number") { setRemaining(id, res.body.remaining); }
      switch (word) {
        case "claimed":
          sayClaimed(out, "Claimed —", res.body.coupon && res.body.coupon.code);
          heldOne(card);
          break;
        case "duplicate":
          say(out, "info", "Already claimed with this click — it is in", { href: "/wallet", text: "your wallet" });
          break;
        case "user_limit_reached":
          say(out, "err", "You already have the most you may hold.");
          markAtLimit(card);
          break;
        case "sold_out":
          say(out, "err", "Sold out.");
          markSoldOut(id);
          break;
        case "budget_exhausted":
          say(out, "err", "All gone: this campaign has given out everything it can.");
          break;
        case "not_claimable":
          say(out, "err", "Not open right now" + (res.body.error ? " (" + res.body.error + ")." : "."));
          markClosed(id);
          break;
        case "unauthorized":
          say(out, "err", "Your session has ended.", { href: "/login?next=/", text: "Log in again" });
          break;
        case "forbidden":
          say(out, "err", /CSRF/.test(res.body.error || "") ?
            "This page is out of date. Reload it and try again." : "Only shoppers can claim coupons.");
          break;
        case "rate_limited":
          say(out, "err", "Too many tries. Wait a moment and try again.");
          break;
        case "in_progress":
        case "busy":
          say(out, "info", "Still working on it. Try again in a moment.");
          break;
        case "unavailable":
        case "internal":
          say(out, "err", "The shop is busy right now. Try again in a moment.");
          break;
        default:
          say(out, "err", res.body.error || "That did not work. Try again.");
      }
    }).catch(function () {
      btn.removeAttribute("aria-busy");
      btn.disabled = false;
      say(out, "err", "Could not reach the shop. Check your connection and try again.");
    });
  }

  // ---- scanning a QR code with the camera (where the browser can) ----

  // A hand scanner types the code into the focused field by itself; a phone
  // or a tablet at the till can read the wallet's QR code with its camera.
  function scanInto(input, btn) {
    if (btn.getAttribute("aria-busy") === "true") { return; }
    var detector = new window.BarcodeDetector({ formats: ["qr_code"] });
    var video = document.createElement("video");
    video.className = "scan-video";
    video.muted = true;
    video.setAttribute("playsinline", "");
    btn.setAttribute("aria-busy", "true");
    btn.textContent = "Point the camera at the code…";
    navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" } }).then(function (stream) {
      var done = false;
      function stop() {
        done = true;
        stream.getTracks().forEach(function (tr) { tr.stop(); });
        video.remove();
        btn.removeAttribute("aria-busy");
        btn.textContent = "Scan with the camera";
      }
      video.srcObject = stream;
      input.insertAdjacentElement("afterend", video);
      video.play();
      var until = Date.now() + 30000;
      (function look() {
        if (done) { return; }
        if (Date.now() > until) { stop(); return; }
        detector.detect(video).then(function (codes) {
          if (codes.length > 0 && codes[0].rawValue) {
            input.value = codes[0].rawValue;
            stop();
            var next = input.form && input.form.querySelector("#order_id");
            if (next) { next.focus(); }
            return;
          }
          setTimeout(look, 200);
        }).catch(function () { setTimeout(look, 200); });
      })();
    }).catch(function () {
      btn.removeAttribute("aria-busy");
      btn.textContent = "No camera: type the code";
    });
  }

  function scanners() {
    if (!("BarcodeDetector" in window) || !navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) { return; }
    document.querySelectorAll("[data-scan]").forEach(function (btn) {
      var input = document.getElementById(btn.getAttribute("data-scan"));
      if (!input) { return; }
      btn.hidden = false;
      btn.addEventListener("click", function () { scanInto(input, btn); });
    });
  }

  // ---- the keyboard at the till ----

  // focusChosen puts the keyboard where the page says ([data-focus] names
  // an element id): the Redeem button after a preview, the first wrong
  // field after an error. A text field's text is selected, so that the next
  // scan or typing replaces it instead of being appended to it.
  // A page that names none, answering a form with mistakes, puts it on the
  // first field in error, so that the first thing to correct is where the
  // typing goes.
  function focusChosen() {
    var holder = document.querySelector("[data-focus]");
    var el = holder ? document.getElementById(holder.getAttribute("data-focus"))
      : document.querySelector('main form [aria-invalid="true"]');
    if (!el) { return; }
    el.focus();
    if (el.tagName === "INPUT" && typeof el.select === "function") { el.select(); }
  }

  // ---- cart rows: add and remove items by keyboard ----

  // cartRows keeps one empty row at the end of a cart's table (typing in
  // the last row adds the next) and makes each Remove button take its row
  // off, the keyboard going to the next row's first field. Without the
  // script, the page itself always shows an empty row and an emptied row
  // is left out.
  function cartRows(table) {
    var body = table.tBodies[0];
    function renumber() {
      Array.prototype.forEach.call(body.rows, function (tr, i) {
        tr.setAttribute("data-row", String(i + 1));
        tr.querySelectorAll("[aria-label]").forEach(function (el) {
          el.setAttribute("aria-label", el.getAttribute("aria-label").replace(/Item \d+/, "Item " + (i + 1)));
        });
      });
    }
    function filled(tr) {
      return Array.prototype.some.call(tr.querySelectorAll("input"), function (i) { return i.value.trim() !== ""; });
    }
    body.addEventListener("input", function (ev) {
      var tr = ev.target.closest("tr");
      if (tr !== body.rows[body.rows.length - 1] || !filled(tr)) { return; }
      var next = tr.cloneNode(true);
      next.querySelectorAll("input").forEach(function (i) {
        i.value = ""; i.removeAttribute("aria-invalid"); i.removeAttribute("aria-describedby");
      });
      body.appendChild(next);
      renumber();
    });
    body.addEventListener("click", function (ev) {
      var btn = ev.target.closest("[data-remove-row]");
      if (!btn) { return; }
      var tr = btn.closest("tr"), next = tr.nextElementSibling || tr.previousElementSibling;
      if (body.rows.length > 1) { tr.remove(); } else { tr.querySelectorAll("input").forEach(function (i) { i.value = ""; }); next = tr; }
      renumber();
      var first = next && next.querySelector("input");
      if (first) { first.focus(); }
    });
  }

  // ---- copying a code, and the full-screen QR code ----

  // copyCode copies a button's data-copy to the clipboard (or, where the
  // browser has no clipboard for the page, selects the code to copy by hand)
  // and says which it did.
  function copyCode(btn) {
    var code = btn.getAttribute("data-copy");
    function said(text) {
      btn.textContent = text;
      setTimeout(function () { btn.textContent = "Copy"; }, 2000);
    }
    function byHand() {
      var box = btn.parentNode && btn.parentNode.querySelector(".code");
      if (box && window.getSelection) {
        var r = document.createRange();
        r.selectNodeContents(box);
        var sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(r);
        try {
          if (document.execCommand("copy")) { said("Copied"); return; }
        } catch (e) { /* fall through */ }
      }
      said("Select and copy");
    }
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(code).then(function () { said("Copied"); }, byHand);
    } else {
      byHand();
    }
  }

  function qrDialogs() {
    document.querySelectorAll("[data-qr-open]").forEach(function (btn) {
      var dlg = document.getElementById(btn.getAttribute("data-qr-open"));
      if (!dlg || typeof dlg.showModal !== "function") { return; }
      btn.addEventListener("click", function () { dlg.showModal(); });
      dlg.addEventListener("click", function (e) {
        // A tap beside the code, or on Close, closes it (Escape too).
        if (e.target === dlg || e.target.hasAttribute("data-qr-close")) { dlg.close(); }
      });
    });
  }

  // ---- live regions ----

  // liveRegions reloads each [data-live] part of the page (the console's
  // figures) every data-live seconds from a fresh copy of the page, as a
  // whole: every figure of it is read at one moment, so its sums still add
  // up. A region with the keyboard focus in it waits for the next tick.
  function liveRegions() {
    if (!window.fetch || !window.DOMParser) { return; }
    document.querySelectorAll("[data-live]").forEach(function (region, i) {
      var secs = parseInt(region.getAttribute("data-live"), 10) || 10;
      setInterval(function () {
        if (document.hidden || region.contains(document.activeElement)) { return; }
        fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
          .then(function (r) { return r.ok ? r.text() : null; })
          .then(function (html) {
            if (!html || region.contains(document.activeElement)) { return; }
            var fresh = new DOMParser().parseFromString(html, "text/html").querySelectorAll("[data-live]")[i];
            if (!fresh) { return; }
            region.replaceChildren.apply(region, Array.prototype.slice.call(fresh.childNodes).map(function (n) {
              return document.importNode(n, true);
            }));
            confirms(region);
          })
          .catch(function () { /* try again at the next tick */ });
      }, secs * 1000);
    });
  }

  function confirms(root) {
    root.querySelectorAll("form[data-confirm]").forEach(function (form) {
      form.addEventListener("submit", function (e) {
        if (!window.confirm(form.getAttribute("data-confirm"))) { e.preventDefault(); }
      });
    });
  }

  // ---- jobs ----

  // followJobs keeps the progress of the jobs on the page current
  // ([data-job] elements of a queued or running job): it asks the API for
  // each once a second until the job is done or failed, then shows its
  // result's download.
  function followJobs() {
    var els = document.querySelectorAll("[data-job]");
    els.forEach(function (el) {
      var id = el.getAttribute("data-job");
      function show(j) {
        var set = function (sel, text) { var n = el.querySelector(sel); if (n) { n.textContent = text; } };
        var bar = el.querySelector("[data-job-bar]");
        if (bar) { bar.max = j.total; bar.value = j.done; bar.textContent = j.done + " of " + j.total; }
        set("[data-job-done]", String(j.done));
        set("[data-job-errors]", String(j.errors));
        // The job's page says what succeeded and what was refused, never
        // "done" rows that include the refused ones.
        set("[data-job-ok]", String(j.done - j.errors));
        var left = j.total - j.done;
        set("[data-job-togo]", j.state === "done" || j.state === "failed" ? "" :
          ", " + left + " of " + j.total + (j.total === 1 ? " row" : " rows") + " to go");
        var badge = el.querySelector("[data-job-badge]");
        if (badge) { badge.textContent = j.state; badge.className = "badge badge-" + j.state; }
        el.setAttribute("data-job-state", j.state);
        if (j.state === "done" || j.state === "failed") {
          var dl = el.querySelector("[data-job-download]");
          if (dl) { dl.hidden = false; }
          var wait = el.querySelector("[data-job-wait]");
          if (wait) { wait.hidden = true; }
          // An import's page lists its refused rows, written by the server:
          // once the job ends with some, the page is loaded again to show them.
          if (el.hasAttribute("data-job-reload") && j.errors > 0) { window.location.reload(); }
          return true;
        }
        return false;
      }
      function tick() {
        fetch("/api/v1/jobs/" + encodeURIComponent(id), { credentials: "same-origin", headers: { "Accept": "application/json" } })
          .then(function (r) { return r.ok ? r.json() : null; })
          .then(function (j) {
            if (!j || !show(j)) { window.setTimeout(tick, 1000); }
          })
          .catch(function () { window.setTimeout(tick, 3000); });
      }
      var st = el.getAttribute("data-job-state");
      if (st === "queued" || st === "running") { window.setTimeout(tick, 500); }
    });
  }

  // ---- forms ----

  // toggleFields shows only the fields of the chosen kind, target,
  // validity and code mode on the template form (the shared code only for a
  // shared code); an attribute may list several values, separated by spaces.
  function toggleFields(form) {
    function sync(name, attr) {
      var chosen = form.querySelector('input[name="' + name + '"]:checked, select[name="' + name + '"]');
      form.querySelectorAll("[" + attr + "]").forEach(function (el) {
        el.hidden = !!chosen && el.getAttribute(attr).split(" ").indexOf(chosen.value) < 0;
      });
    }
    function all() {
      sync("kind", "data-kind"); sync("validity", "data-validity"); sync("applies_to", "data-applies");
      sync("code_mode", "data-code-mode");
    }
    form.addEventListener("change", all);
    all();
  }

  // toggleActions shows, in each further action of the template form, only
  // the fields of its kind and of what it applies to (data-action-kind,
  // data-action-applies: values separated by spaces). Without the script
  // every field shows and the server leaves out those that do not apply.
  function toggleActions(form) {
    form.querySelectorAll("[data-action]").forEach(function (action) {
      function chosen(what) {
        var el = action.querySelector('[data-action-choice="' + what + '"]');
        return el ? el.value : "";
      }
      function sync() {
        var kind = chosen("kind"), applies = chosen("applies");
        if (kind === "free_shipping") { applies = "shipping"; }
        action.querySelectorAll("[data-action-kind], [data-action-applies]").forEach(function (el) {
          var k = el.getAttribute("data-action-kind"), a = el.getAttribute("data-action-applies");
          el.hidden = (!!k && k.split(" ").indexOf(kind) < 0) || (!!a && a.split(" ").indexOf(applies) < 0);
        });
      }
      action.addEventListener("change", sync);
      sync();
    });
  }

  // fillKept fills the form a session ended under with what was typed in
  // it, kept while the admin logged in again (docs/pages.md, "Session
  // ended"). Hidden, password and file fields keep the page's own values:
  // the CSRF token is the new session's.
  function fillKept() {
    var holder = document.getElementById("kept-form");
    if (!holder) { return; }
    var kept;
    try { kept = JSON.parse(holder.textContent); } catch (e) { return; }
    var form = null;
    document.querySelectorAll("main form").forEach(function (f) {
      if (!form && f.getAttribute("action") === kept.action) { form = f; }
    });
    if (!form || !kept.fields) { return; }
    Array.prototype.forEach.call(form.elements, function (el) {
      var values = el.name ? kept.fields[el.name] : null;
      if (!values || el.type === "hidden" || el.type === "password" || el.type === "file") { return; }
      if (el.type === "checkbox" || el.type === "radio") {
        el.checked = values.indexOf(el.value) >= 0;
      } else if (el.tagName === "SELECT" && el.multiple) {
        Array.prototype.forEach.call(el.options, function (o) { o.selected = values.indexOf(o.value) >= 0; });
      } else if (el.type !== "submit" && el.type !== "button") {
        el.value = values[0];
      }
      el.dispatchEvent(new Event("change", { bubbles: true }));
    });
  }

  // keepFormTokens makes a create form reached again by Back (or Forward)
  // the same filling as the one sent from it: the form's one-time key
  // (form_token) of the last send from this tab is put back, so that Make
  // again makes nothing twice and the page says "Already created". A form
  // opened anew keeps the fresh key the server gave it (docs/pages.md,
  // "Forms that forgive").
  function keepFormTokens() {
    var nav = window.performance && performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
    var back = !!nav && nav.type === "back_forward";
    document.querySelectorAll('main form input[name="form_token"]').forEach(function (input) {
      var form = input.form;
      if (!form) { return; }
      var key = "form_token " + form.getAttribute("action");
      if (back) {
        try { var sent = window.sessionStorage.getItem(key); if (sent) { input.value = sent; } } catch (e) { /* no storage */ }
      }
      form.addEventListener("submit", function () {
        try { window.sessionStorage.setItem(key, input.value); } catch (e) { /* no storage */ }
      });
    });
  }

  // describeAsTyped shows the new template form's coupon in words as the
  // merchant types: the form is sent to /admin/templates/describe (which
  // creates nothing) a moment after each change, and its sentence replaces
  // the one shown. Without the script, "Say it in words" does the same by a
  // send of the form (docs/pages.md).
  function describeAsTyped(form) {
    var out = form.querySelector("[data-describe]");
    var button = form.querySelector("[data-describe-button]");
    if (!out) { return; }
    if (button) { button.hidden = true; }
    var hint = "Fill in what the coupon takes off to see it in words.";
    var timer = null, asked = 0;
    function ask() {
      var n = ++asked;
      fetch("/admin/templates/describe", { method: "POST", credentials: "same-origin",
        headers: { "Accept": "text/plain", "X-CSRF-Token": csrfToken() }, body: new URLSearchParams(new FormData(form)) })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (words) {
          if (words === null || n !== asked) { return; }
          out.textContent = words || hint;
          out.classList.toggle("muted", !words);
        })
        .catch(function () { /* the sentence stays as it was */ });
    }
    function later() { window.clearTimeout(timer); timer = window.setTimeout(ask, 250); }
    form.addEventListener("input", later);
    form.addEventListener("change", later);
    ask();
  }

  // knownTargets gives each target list that has values seen on orders a
  // field choosing from them (its datalist): a value chosen is added to the
  // list, on a line of its own. Without the script the values are named
  // under the list, to be typed (docs/pages.md).
  function knownTargets(form) {
    form.querySelectorAll("textarea[data-known-list]").forEach(function (area) {
      var label = form.querySelector('label[for="' + area.id + '"]');
      var add = document.createElement("input");
      add.type = "text";
      add.className = "known-add";
      add.id = area.id + "-add";
      add.setAttribute("list", area.getAttribute("data-known-list"));
      add.setAttribute("aria-label", "Add to " + (label ? label.firstChild.textContent.trim() : "the list") + " a value seen on orders");
      add.placeholder = "Add one seen on orders…";
      area.insertAdjacentElement("afterend", add);
      function take() {
        var v = add.value.trim();
        if (!v) { return; }
        var have = area.value.split(/[\n,]/).map(function (s) { return s.trim(); });
        if (have.indexOf(v) < 0) { area.value = (area.value.trim() ? area.value.replace(/\s+$/, "") + "\n" : "") + v; }
        add.value = "";
        area.dispatchEvent(new Event("input", { bubbles: true }));
      }
      add.addEventListener("change", take);
      add.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { ev.preventDefault(); take(); } });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    fillKept();
    document.querySelectorAll("form[data-template-form]").forEach(knownTargets);
    document.querySelectorAll("form[data-template-form]").forEach(describeAsTyped);
    keepFormTokens();
    pollStock();
    document.querySelectorAll("[data-claim]").forEach(function (btn) {
      btn.addEventListener("click", function () { claim(btn); });
    });
    confirms(document);
    liveRegions();
    document.querySelectorAll("form[data-template-form]").forEach(toggleFields);
    document.querySelectorAll("form[data-template-form]").forEach(toggleActions);
    scanners();
    document.querySelectorAll("table.cart-rows").forEach(cartRows);
    focusChosen();
    qrDialogs();
    document.querySelectorAll("button[data-copy]").forEach(function (btn) {
      btn.addEventListener("click", function () { copyCode(btn); });
    });
    followJobs();
  });
})();
