(function () {
  "use strict";
  // Sortable tables: click a header to sort by its column (numbers by the
  // cell's data-v, text otherwise; cells without a value last).
  function value(cell) {
    var v = cell.getAttribute("data-v");
    if (v !== null) {
      return v === "" ? null : parseFloat(v);
    }
    return cell.textContent.trim().toLowerCase();
  }
  function compare(a, b) {
    if (a === null || b === null) {
      return (a === null) - (b === null);
    }
    if (typeof a === "number" && typeof b === "number") {
      return a - b;
    }
    return String(a).localeCompare(String(b), undefined, { numeric: true });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (r, s) {
          var a = value(r.cells[col]), b = value(s.cells[col]);
          if (a === null || b === null) {
            return compare(a, b); // empty cells last either way
          }
          return ascending ? compare(a, b) : compare(b, a);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  // Filters: every word of the search box must occur in the row, each
  // select must match its column, and "flagged only" keeps flagged rows.
  Array.prototype.forEach.call(document.querySelectorAll("[data-filter-for]"), function (box) {
    var table = document.getElementById(box.getAttribute("data-filter-for"));
    var search = box.querySelector("input[type=search]");
    var selects = box.querySelectorAll("select");
    var flagged = box.querySelector("input[type=checkbox]");
    var count = box.querySelector(".count");
    function apply() {
      var words = search.value.toLowerCase().split(/\s+/).filter(function (w) { return w.length > 0; });
      var shown = 0, rows = table.tBodies[0].rows;
      Array.prototype.forEach.call(rows, function (r) {
        var text = r.textContent.toLowerCase();
        var ok = words.every(function (w) { return text.indexOf(w) >= 0; });
        Array.prototype.forEach.call(selects, function (s) {
          if (s.value !== "" && r.getAttribute("data-" + s.name) !== s.value) {
            ok = false;
          }
        });
        if (flagged && flagged.checked && r.getAttribute("data-flagged") !== "1") {
          ok = false;
        }
        r.hidden = !ok;
        if (ok) {
          shown++;
        }
      });
      count.textContent = shown + " of " + rows.length + " rows";
    }
    search.addEventListener("input", apply);
    Array.prototype.forEach.call(selects, function (s) { s.addEventListener("change", apply); });
    if (flagged) {
      flagged.addEventListener("change", apply);
    }
    apply();
  });
  // A link to a claim opens it.
  function openTarget() {
    var el = location.hash.length > 1 ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
    if (el && el.tagName === "DETAILS") {
      el.open = true;
    }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
