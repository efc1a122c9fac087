// ContextWeaver dashboard: polls the dashboard's API (the sessions API's figures) every 2 s and redraws. Everything a session holds
// (notes, reasons, test names) is agent output: it reaches the page only through textContent.
(function () {
  "use strict";
  var API = "/contextweaver/dashboard/api";
  var EVERY = 2000;
  var body = document.body;
  var live = document.getElementById("live");

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    return e;
  }
  function int(n) { return Number(n).toLocaleString("en-US"); }
  function one(n) { return Number(n).toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 }); }
  // the same text as serve/ledger/inspect.py money()
  function money(cost) {
    if (!cost.usage_reported) return ["-", "-", "-"];
    return [one(cost.billed), one(cost.passthrough), one(cost.saved) + " (" + (cost.saved_share * 100).toFixed(2) + "%)"];
  }
  function totals(cost) {
    var m = money(cost);
    var figures = [["requests", int(cost.requests)], ["billed", m[0]], ["passed through whole", m[1]],
                   ["saved", m[2]], ["cuts", int(cost.cuts)]];
    var box = document.getElementById("totals");
    box.textContent = "";
    figures.forEach(function (f) {
      var d = el("div", "figure");
      var b = el("b", f[0] === "saved" && cost.saved < 0 ? "negative" : null, f[1]);
      b.setAttribute("data-figure", f[0]);
      d.appendChild(b);
      d.appendChild(el("span", null, f[0]));
      box.appendChild(d);
    });
    document.getElementById("negative").hidden = !(cost.usage_reported && cost.saved < 0);
  }
  function get(url) {
    return fetch(url, { credentials: "same-origin", headers: { accept: "application/json" } }).then(function (r) {
      if (!r.ok) throw new Error(url + ": HTTP " + r.status);
      return r.json();
    });
  }
  function poll(step) {
    function again() {
      step().then(function () { live.className = "live"; live.textContent = "live"; },
                  function (e) { live.className = "live off"; live.textContent = String(e.message || e); })
        .then(function () { setTimeout(again, EVERY); });
    }
    again();
  }

  // -- every session ------------------------------------------------------------------------------
  function sessionsPage() {
    var tbody = document.querySelector("#sessions tbody");
    poll(function () {
      return get(API + "/sessions").then(function (data) {
        totals(data.cost);
        tbody.textContent = "";
        data.sessions.slice().reverse().forEach(function (s) {
          var tr = el("tr");
          tr.setAttribute("data-session", s.id);
          var a = el("a", null, s.id);
          a.href = "/contextweaver/dashboard/session/" + encodeURIComponent(s.id);
          var first = el("td");
          first.appendChild(a);
          tr.appendChild(first);
          if (data.operator) tr.appendChild(el("td", "owner", s.owner));
          var c = s.cost;
          [s.steps, c.requests, int(c.sent_tokens) + " / " + int(c.full_tokens)].concat(money(c), [c.cuts])
            .forEach(function (v) { tr.appendChild(el("td", null, v)); });
          tbody.appendChild(tr);
        });
        (data.passed || []).forEach(function (p) {  // requests forwarded outside any session
          var tr = el("tr", "passed");
          var cells = ["outside sessions"].concat(data.operator ? [p.owner] : [], ["-", p.cost.requests, "-"],
                                                  money(p.cost), ["-"]);
          cells.forEach(function (v, i) { tr.appendChild(el("td", data.operator && i === 1 ? "owner" : null, v)); });
          tbody.appendChild(tr);
        });
      });
    });
  }

  // -- one session --------------------------------------------------------------------------------
  function sessionPage() {
    var id = body.getAttribute("data-session");
    var base = API + "/session/" + encodeURIComponent(id);
    var requests = [], nodes = [], sizes = {}, after = 0, steps = Number(body.getAttribute("data-steps")), graphAt = Date.now(), stale = false;

    function timeline() {
      var box = document.getElementById("timeline");
      box.textContent = "";
      if (!requests.length) { box.appendChild(el("p", "empty", "no request forwarded yet")); return; }
      var width = Math.max(box.clientWidth || 900, 300), height = 180, left = 56, pad = 18;
      var top = Math.max.apply(null, requests.map(function (r) { return r.full_tokens; })) || 1;
      var slot = (width - left - 8) / requests.length, bar = Math.max(1, Math.min(26, slot * 0.75));
      var chart = svg("svg", { width: width, height: height + pad, viewBox: "0 0 " + width + " " + (height + pad), role: "img" });
      chart.setAttribute("aria-label", "tokens per request");
      [0, 0.5, 1].forEach(function (f) {
        var y = height - f * (height - 10);
        chart.appendChild(svg("line", { x1: left, x2: width, y1: y, y2: y, "class": "grid" }));
        var t = svg("text", { x: left - 6, y: y + 4, "text-anchor": "end", "class": "axis" });
        t.textContent = int(Math.round(top * f));
        chart.appendChild(t);
      });
      requests.forEach(function (r, i) {
        var x = left + i * slot + (slot - bar) / 2;
        function rect(tokens, cls) {
          var h = tokens / top * (height - 10);
          return svg("rect", { x: x, y: height - h, width: bar, height: h, "class": cls });
        }
        var g = svg("g", { "class": "request", "data-request": r.id });
        var title = svg("title", {});
        title.textContent = "request " + (i + 1) + " (step " + r.step + "): " + int(r.sent_tokens) + " of " +
          int(r.full_tokens) + " history tokens sent, " + int(r.cached_tokens) + " cacheable" + (r.cut ? "; a cut" : "");
        g.appendChild(title);
        g.appendChild(rect(r.full_tokens, "full"));
        g.appendChild(rect(r.sent_tokens, "sent"));
        g.appendChild(rect(r.cached_tokens, "cached"));
        if (r.cut) g.appendChild(svg("line", { x1: x - 1, x2: x - 1, y1: 0, y2: height, "class": "cut" }));
        chart.appendChild(g);
      });
      var label = svg("text", { x: left, y: height + 14, "class": "axis" });
      label.textContent = requests.length + " requests, oldest first";
      chart.appendChild(label);
      box.appendChild(chart);
    }

    function cuts() {
      var box = document.getElementById("cuts");
      box.textContent = "";
      var found = requests.filter(function (r) { return r.cut; });
      if (!found.length) {
        var woven = requests.some(function (r) { return r.sent_tokens < r.full_tokens; });
        box.appendChild(el("p", "empty", woven ? "no lazy cut: each request was woven anew (see the timeline)"
                                               : "no cut: every request went out with its history whole"));
        return;
      }
      found.slice().reverse().forEach(function (r) {
        var d = el("details", "cut");
        d.setAttribute("data-request", r.id);
        d.appendChild(el("summary", null, "at step " + r.step + ": " + int(r.cut.tokens) + " of " +
          int(r.cut.full_history_tokens) + " tokens kept, " + r.cut.left_out_total +
          (r.cut.left_out_total === 1 ? " step" : " steps") + " left out or compressed"));
        d.appendChild(el("h3", null, "Working-state note"));
        d.appendChild(r.cut.note ? el("pre", null, r.cut.note) : el("p", "empty", "(no note at this budget)"));
        d.appendChild(el("h3", null, "Left out, and why"));
        var t = el("table", "left");
        r.cut.left_out.forEach(function (row) {
          var tr = el("tr");
          var size = row[1] === "dropped" && sizes[row[0]] !== undefined ? int(sizes[row[0]]) + " tok left out"
                                                                          : int(row[3]) + " tok";
          ["N" + row[0], row[1], row[2], size].forEach(function (v) { tr.appendChild(el("td", null, v)); });
          t.appendChild(tr);
        });
        d.appendChild(t);
        box.appendChild(d);
      });
      box.firstChild.open = true;
    }

    function recalls() {  // steps whose call read left-out steps back through the proxy's recall URL
      var box = document.getElementById("recalls");
      box.textContent = "";
      var found = nodes.filter(function (n) { return (n.action || "").indexOf("/contextweaver/recall/") >= 0; });
      box.appendChild(el("h3", null, "Recalls (" + found.length + ")"));
      if (!found.length) { box.appendChild(el("p", "empty", "no step read back yet")); return; }
      var ul = el("ul", "recalls");
      found.forEach(function (n) {
        var step = (n.action.match(/recall\/\w+\/([\w,-]+)/) || [])[1];
        ul.appendChild(el("li", null, "N" + n.index + " read back step " + step + ": " + n.action.split("\n")[0]));
      });
      box.appendChild(ul);
    }

    function tests() {
      var box = document.getElementById("tests");
      box.textContent = "";
      var latest = null;
      requests.forEach(function (r) { if (r.test_status) latest = r.test_status; });
      box.appendChild(latest ? el("pre", "status", latest) : el("p", "empty", "no test run seen yet"));
      var fixed = [], superseded = {};
      nodes.forEach(function (n) {
        (n.labels || []).forEach(function (l) {
          if (l.status === "superseded") { fixed.push([n.index, l]); superseded[l.index] = true; }
        });
      });
      var failing = nodes.filter(function (n) { return n.status === "failed" && !superseded[n.index]; });
      box.appendChild(el("h3", null, "Failing (" + failing.length + ")"));
      var ul = el("ul", "failing");
      failing.forEach(function (n) { ul.appendChild(el("li", null, "N" + n.index + ": " + (n.action || "").split("\n")[0])); });
      box.appendChild(failing.length ? ul : el("p", "empty", "none"));
      box.appendChild(el("h3", null, "Fixed (" + fixed.length + ")"));
      var ol = el("ul", "fixed");
      fixed.forEach(function (f) { ol.appendChild(el("li", null, "N" + f[0] + " supersedes N" + f[1].index + ": " + f[1].reason)); });
      box.appendChild(fixed.length ? ol : el("p", "empty", "none"));
    }

    function table() {
      var tbody = document.querySelector("#requests tbody");
      tbody.textContent = "";
      requests.slice(-50).reverse().forEach(function (r) {
        var tr = el("tr", r.cut ? "was-cut" : null);
        tr.setAttribute("data-request", r.id);
        var share = r.sent_tokens ? (100 * r.cached_tokens / r.sent_tokens).toFixed(0) + "%" : "-";
        var usage = r.usage === "reported";
        [requests.indexOf(r) + 1, r.step, int(r.sent_tokens) + " / " + int(r.full_tokens), share,
         usage ? int(r.input_tokens) : r.usage, usage ? int(r.cache_read_tokens) : "", usage ? int(r.cache_write_tokens) : "",
         usage ? int(r.output_tokens) : "", usage ? one(r.billed) : "", usage ? one(r.passthrough) : "",
         r.miss_reason || "", r.status].forEach(function (v) { tr.appendChild(el("td", null, v)); });
        tbody.appendChild(tr);
      });
    }

    function refreshGraph(now) {  // a stale graph is reloaded at most every 10 s
      var frame = document.getElementById("graph");
      if (stale && now - graphAt > 10000) { graphAt = now; stale = false; frame.src = frame.src.split("#")[0]; }
    }

    function more(url, take) {  // every page after what is held
      return get(url()).then(function (data) { return take(data) ? more(url, take) : data; });
    }

    poll(function () {
      var requestsDone = more(function () { return base + "/requests?after=" + after; }, function (data) {
        totals(data.cost);
        requests = requests.concat(data.requests);
        if (data.requests.length) after = data.requests[data.requests.length - 1].id;
        if (data.steps !== steps) { steps = data.steps; stale = true; }
        return data.next_after !== null;
      });
      var nodesDone = more(function () { return base + "?offset=" + nodes.length; }, function (data) {
        data.nodes.forEach(function (n) { sizes[n.index] = n.tokens; nodes.push({ index: n.index, status: n.status, labels: n.labels, action: n.action }); });
        return data.next_offset !== null;
      });
      return Promise.all([requestsDone, nodesDone]).then(function () {
        timeline(); cuts(); recalls(); tests(); table(); refreshGraph(Date.now());
        body.setAttribute("data-requests", String(requests.length));
      });
    });
  }

  if (body.getAttribute("data-page") === "sessions") sessionsPage();
  if (body.getAttribute("data-page") === "session") sessionPage();
  body.setAttribute("data-ready", "1");
})();
