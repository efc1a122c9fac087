// ContextWeaver graph viewer. Trace text is untrusted: it only ever reaches the page through
// textContent (never innerHTML), and the data arrives as JSON, not as markup.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("cw-data").textContent);
  var nodes = data.nodes;
  var panel = document.getElementById("panel");
  var rows = document.querySelectorAll("g.row");
  var arcs = document.querySelectorAll("path.arc");
  var selected = null;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function jump(index) {
    var b = el("button", "jump", "N" + index);
    b.type = "button";
    b.addEventListener("click", function () { select(index, true); });
    return b;
  }
  function section(title, child) {
    panel.appendChild(el("h3", null, title));
    panel.appendChild(child);
  }
  function block(title, text) {
    section(title, text ? el("pre", null, text) : el("div", "empty", "(empty)"));
  }
  function pill(text, colour) {
    var p = el("span", "pill", text);
    p.style.background = colour;
    return p;
  }

  function render(n) {
    panel.textContent = "";
    var h = el("h2");
    h.appendChild(el("span", null, n.id + (n.index === 0 ? " · root" : " · step " + n.index)));
    h.appendChild(pill(n.status, n.colour));
    if (n.mode) h.appendChild(el("span", "pill mode", n.mode));
    panel.appendChild(h);
    panel.appendChild(el("div", "sub", n.label));

    var dl = el("dl");
    function fact(k, v) { dl.appendChild(el("dt", null, k)); var d = el("dd"); if (v instanceof Node) d.appendChild(v); else d.textContent = v; dl.appendChild(d); }
    fact("kind", n.kind);
    fact("status", n.status);
    if (n.superseded_by !== null && n.superseded_by !== undefined) fact("superseded by", jump(n.superseded_by));
    fact("tokens", String(n.tokens));
    if (n.mode) fact("in context", n.mode + (n.mode_reason ? ": " + n.mode_reason : ""));
    panel.appendChild(dl);

    var ul = el("ul", "links");
    n.parents.forEach(function (p) {
      var li = el("li");
      li.appendChild(jump(p.index));
      li.appendChild(el("span", "conf", p.confidence.toFixed(2)));
      li.appendChild(el("span", null, p.reason || "(no reason given)"));
      ul.appendChild(li);
    });
    section("Parents (" + n.parents.length + ")", n.parents.length ? ul : el("div", "empty", "none"));
    var kids = el("div");
    n.children.forEach(function (c) { kids.appendChild(jump(c)); kids.appendChild(document.createTextNode(" ")); });
    section("Children (" + n.children.length + ")", n.children.length ? kids : el("div", "empty", "none"));
    if (n.summary) block("Summary", n.summary);
    if (n.kind !== "user") { block("Thought", n.thought); block("Action", n.action); }
    block(n.kind === "root" ? "System prompt and task" : (n.kind === "user" ? "User message" : "Observation"), n.observation);
  }

  function select(index, scroll) {
    if (!(index >= 0 && index < nodes.length)) return;
    selected = index;
    var n = nodes[index];
    var parents = {}, children = {};
    n.parents.forEach(function (p) { parents[p.index] = true; });
    n.children.forEach(function (c) { children[c] = true; });
    rows.forEach(function (r) {
      var i = Number(r.getAttribute("data-index"));
      r.classList.toggle("selected", i === index);
      r.classList.toggle("parent", !!parents[i]);
      r.classList.toggle("child", !!children[i]);
      if (i === index && scroll && r.scrollIntoView) r.scrollIntoView({ block: "center" });
    });
    arcs.forEach(function (a) {
      var on = Number(a.getAttribute("data-child")) === index || Number(a.getAttribute("data-parent")) === index;
      a.classList.toggle("on", on);
      a.classList.toggle("dim", !on);
    });
    render(n);
    if (window.history && history.replaceState) history.replaceState(null, "", "#node=" + index);
  }

  rows.forEach(function (r) {
    r.addEventListener("click", function () { select(Number(r.getAttribute("data-index")), false); });
  });
  document.addEventListener("keydown", function (e) {
    if (selected === null) return;
    if (e.key === "ArrowDown" || e.key === "j") { select(Math.min(nodes.length - 1, selected + 1), true); e.preventDefault(); }
    if (e.key === "ArrowUp" || e.key === "k") { select(Math.max(0, selected - 1), true); e.preventDefault(); }
  });
  var match = /^#node=(\d+)$/.exec(window.location.hash || "");
  var start = match ? Number(match[1]) : (data.current !== null ? data.current : nodes.length - 1);
  select(start, !!match);
  document.body.setAttribute("data-ready", "1");
})();
