// spanprof's only script in this page: a click on a heading of a sortable table sorts its rows
// (numbers by their data-v, text as text). The report's data is never run: it is JSON.
(function () {
  for (const table of document.querySelectorAll("table.sortable")) {
    const headings = table.querySelectorAll("th");
    headings.forEach(function (th, column) {
      th.addEventListener("click", function () {
        const up = !th.classList.contains("asc");
        headings.forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(up ? "asc" : "desc");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        const key = function (row) {
          const cell = row.cells[column];
          if (!cell) return "";
          const v = cell.getAttribute("data-v");
          return v === null ? cell.textContent : parseFloat(v);
        };
        rows.sort(function (a, b) {
          const x = key(a), y = key(b);
          const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
          return up ? order : -order;
        });
        for (const row of rows) body.appendChild(row);
      });
    });
  }
  document.body.setAttribute("data-ready", "1");
})();
