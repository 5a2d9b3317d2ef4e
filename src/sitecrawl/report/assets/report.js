/* sitecrawl report: sortable, filterable, paginated tables over the JSON data block.
   Data is only ever put into the page with textContent and vetted href values, its bidi
   controls shown as escapes (a crawled RLO cannot make a cell read backwards). */
(function () {
  "use strict";

  var numberFormat = new Intl.NumberFormat("en-US");
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var PAGE_SIZES = [25, 50, 100, 500];
  var LIST_PREVIEW = 5;

  // Bidi formatting characters (LRE..RLO, LRI..PDI, LRM, RLM, ALM), as the terminal shows them.
  var BIDI = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;

  function inert(text) {
    return String(text).replace(BIDI, function (c) {
      return "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4);
    });
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = inert(text);
    return node;
  }

  function formatMs(ms) {
    if (ms === null) return "\u2014";
    return ms >= 1000 ? (ms / 1000).toFixed(2) + " s" : Math.round(ms) + " ms";
  }

  function formatBytes(n) {
    if (n === null) return "\u2014";
    if (n < 1024) return n + " B";
    if (n < 1048576) return (n / 1024).toFixed(1) + " KB";
    return (n / 1048576).toFixed(2) + " MB";
  }

  function statusClass(status) {
    if (status === null) return "status status-err";
    return "status status-" + String(status).charAt(0) + "xx";
  }

  function urlNode(url) {
    if (url === null || url === "") return el("span", "muted", "\u2014");
    var link = el("a", "url", url);
    if (/^https?:\/\//i.test(url)) {
      link.href = url;
      link.rel = "noopener noreferrer nofollow";
      link.target = "_blank";
    }
    return link;
  }

  // A list cell is an array, or {items, total} when the file embeds only the first items.
  function listItems(v) { return Array.isArray(v) ? v : v.items; }
  function listTotal(v) { return Array.isArray(v) ? v.length : v.total; }

  function listNode(value, renderItem, more) {
    var items = listItems(value);
    var total = listTotal(value);
    var wrap = el("div", "cell-list");
    var list = el("ul");
    items.slice(0, LIST_PREVIEW).forEach(function (item) {
      var li = el("li");
      renderItem(li, item);
      list.appendChild(li);
    });
    wrap.appendChild(list);
    if (total > LIST_PREVIEW) {
      var details = el("details");
      details.appendChild(el("summary", null, "+" + numberFormat.format(total - LIST_PREVIEW) + " more"));
      var rest = el("ul");
      items.slice(LIST_PREVIEW).forEach(function (item) {
        var li = el("li");
        renderItem(li, item);
        rest.appendChild(li);
      });
      if (total > items.length) {
        var left = numberFormat.format(total - items.length) + " more, not in this file";
        rest.appendChild(el("li", "muted not-embedded", more ? left + ": " + more : left));
      }
      details.appendChild(rest);
      wrap.appendChild(details);
    }
    return wrap;
  }

  var RENDER = {
    text: function (td, v) {
      if (v === null || v === "") td.appendChild(el("span", "muted", "\u2014"));
      else td.textContent = inert(v);
    },
    url: function (td, v) { td.appendChild(urlNode(v)); },
    status: function (td, v) { td.appendChild(el("span", statusClass(v), v === null ? "none" : v)); },
    num: function (td, v) { td.textContent = v === null ? "\u2014" : numberFormat.format(v); },
    ms: function (td, v) { td.textContent = formatMs(v); },
    bytes: function (td, v) { td.textContent = formatBytes(v); },
    bool: function (td, v) { td.textContent = v === null ? "\u2014" : v ? "yes" : "no"; },
    thumb: function (td, v) {
      // Only a JPEG as a data: URL (the report's policy loads nothing else).
      if (typeof v !== "string" || !/^data:image\/jpeg;base64,[A-Za-z0-9+\/=]+$/.test(v)) {
        td.appendChild(el("span", "muted", "\u2014"));
        return;
      }
      var img = document.createElement("img");
      img.className = "thumb";
      img.alt = "screenshot";
      img.src = v;
      td.appendChild(img);
    },
    urls: function (td, v, more) {
      td.appendChild(listNode(v, function (li, url) { li.appendChild(urlNode(url)); }, more));
    },
    refs: function (td, v, more) {
      td.appendChild(listNode(v, function (li, ref) {
        li.appendChild(urlNode(ref[0]));
        var label = ref[1] === null || ref[1] === "" ? "(" + ref[2] + ", no text)" : ref[1];
        li.appendChild(el("span", "anchor", label));
        if (ref[3] === "js") li.appendChild(el("span", "origin", "added by JavaScript"));
      }, more));
    },
    hops: function (td, v, more) {
      td.appendChild(listNode(v, function (li, hop) {
        li.appendChild(el("span", statusClass(hop[1]), hop[1]));
        li.appendChild(urlNode(hop[0]));
      }, more));
    }
  };
  var NUMERIC = { status: true, num: true, ms: true, bytes: true };
  var LISTS = { urls: true, refs: true, hops: true };

  function sortKey(type, v) {
    if (LISTS[type]) return listTotal(v);
    if (v === null) return null;
    if (type === "bool") return v ? 1 : 0;
    if (NUMERIC[type]) return v;
    return String(v).toLowerCase();
  }

  function flatten(value, out) {
    if (value === null) return;
    if (Array.isArray(value)) value.forEach(function (x) { flatten(x, out); });
    else if (typeof value === "object") flatten(value.items, out);
    else out.push(String(value));
  }

  function DataTable(root, spec) {
    this.root = root;
    this.spec = spec;
    this.rows = spec.rows;
    this.view = spec.rows.map(function (_, i) { return i; });
    this.haystack = null;
    this.query = "";
    this.chosen = {};  // facet column -> the value picked ("" or absent: all)
    this.sortColumn = -1;
    this.sortDir = 1;
    this.page = 0;
    this.pageSize = PAGE_SIZES[1];
    this.build();
    this.render();
  }

  DataTable.prototype.build = function () {
    var self = this;
    var toolbar = el("div", "toolbar");
    this.filter = el("input", "filter");
    this.filter.type = "search";
    this.filter.placeholder = "Filter " + numberFormat.format(this.rows.length) + " rows\u2026";
    this.filter.setAttribute("aria-label", "Filter " + this.spec.title);
    var timer = null;
    this.filter.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { self.setQuery(self.filter.value); }, 120);
    });
    this.count = el("span", "count");
    toolbar.appendChild(this.filter);
    (this.spec.facets || []).forEach(function (column) {
      toolbar.appendChild(self.facetMenu(column));
    });
    toolbar.appendChild(this.count);

    var scroller = el("div", "table-scroll");
    var table = el("table");
    var thead = el("thead");
    var headRow = el("tr");
    this.headers = this.spec.columns.map(function (col, index) {
      var th = el("th", NUMERIC[col.type] ? "num" : null);
      th.setAttribute("aria-sort", "none");
      var button = el("button", "sort", col.label);
      button.type = "button";
      button.addEventListener("click", function () { self.sortBy(index); });
      th.appendChild(button);
      headRow.appendChild(th);
      return th;
    });
    thead.appendChild(headRow);
    this.tbody = el("tbody");
    table.appendChild(thead);
    table.appendChild(this.tbody);
    scroller.appendChild(table);

    var pager = el("div", "pager");
    this.pager = pager;
    this.prev = el("button", "page-prev", "\u2190 Prev");
    this.next = el("button", "page-next", "Next \u2192");
    this.prev.type = this.next.type = "button";
    this.pageInfo = el("span", "page-info");
    this.prev.addEventListener("click", function () { self.goto(self.page - 1); });
    this.next.addEventListener("click", function () { self.goto(self.page + 1); });
    var size = el("select", "page-size");
    size.setAttribute("aria-label", "Rows per page");
    PAGE_SIZES.forEach(function (n) {
      var option = el("option", null, n + " per page");
      option.value = String(n);
      option.selected = n === self.pageSize;
      size.appendChild(option);
    });
    size.addEventListener("change", function () {
      self.pageSize = Number(size.value);
      self.goto(0);
    });
    pager.appendChild(this.prev);
    pager.appendChild(this.pageInfo);
    pager.appendChild(this.next);
    pager.appendChild(size);

    this.root.appendChild(toolbar);
    this.root.appendChild(scroller);
    this.root.appendChild(pager);
  };

  // A menu of a column's values, each with its count, in the order they first appear.
  DataTable.prototype.facetMenu = function (column) {
    var self = this;
    var label = this.spec.columns[column].label;
    var counts = {};
    var order = [];
    this.rows.forEach(function (row) {
      var value = String(row[column]);
      if (!Object.prototype.hasOwnProperty.call(counts, value)) {
        counts[value] = 0;
        order.push(value);
      }
      counts[value] += 1;
    });
    var menu = el("select", "facet");
    menu.setAttribute("aria-label", label);
    menu.setAttribute("data-column", label.toLowerCase());
    var all = el("option", null, "Every " + label.toLowerCase());
    all.value = "";
    menu.appendChild(all);
    order.forEach(function (value) {
      var option = el("option", null, value + " (" + numberFormat.format(counts[value]) + ")");
      option.value = value;
      menu.appendChild(option);
    });
    menu.addEventListener("change", function () {
      self.chosen[column] = menu.value;
      self.refilter();
    });
    return menu;
  };

  DataTable.prototype.setQuery = function (text) {
    var query = text.trim().toLowerCase();
    if (query === this.query) return;
    this.query = query;
    this.refilter();
  };

  DataTable.prototype.refilter = function () {
    var query = this.query;
    if (query && this.haystack === null) {
      this.haystack = this.rows.map(function (row) {
        var parts = [];
        flatten(row, parts);
        return parts.join("\u0000").toLowerCase();
      });
    }
    var haystack = this.haystack;
    var rows = this.rows;
    var chosen = this.chosen;
    var picked = Object.keys(chosen).filter(function (c) { return chosen[c] !== ""; });
    var indices = this.rows.map(function (_, i) { return i; });
    this.view = indices.filter(function (i) {
      if (query && haystack[i].indexOf(query) === -1) return false;
      return picked.every(function (c) { return String(rows[i][c]) === chosen[c]; });
    });
    this.applySort();
    this.goto(0);
  };

  DataTable.prototype.sortBy = function (index) {
    if (this.sortColumn === index) this.sortDir = -this.sortDir;
    else {
      this.sortColumn = index;
      this.sortDir = NUMERIC[this.spec.columns[index].type] || LISTS[this.spec.columns[index].type] ? -1 : 1;
    }
    var self = this;
    this.headers.forEach(function (th, i) {
      th.setAttribute("aria-sort", i !== index ? "none" : self.sortDir === 1 ? "ascending" : "descending");
    });
    this.applySort();
    this.goto(0);
  };

  DataTable.prototype.applySort = function () {
    if (this.sortColumn < 0) return;
    var column = this.sortColumn;
    var type = this.spec.columns[column].type;
    var dir = this.sortDir;
    var rows = this.rows;
    var keys = this.view.map(function (i) { return sortKey(type, rows[i][column]); });
    var order = this.view.map(function (_, j) { return j; });
    order.sort(function (a, b) {
      var x = keys[a], y = keys[b];
      if (x === y) return a - b;
      if (x === null) return 1;
      if (y === null) return -1;
      return (x < y ? -1 : 1) * dir;
    });
    var view = this.view;
    this.view = order.map(function (j) { return view[j]; });
  };

  DataTable.prototype.goto = function (page) {
    var pages = Math.max(1, Math.ceil(this.view.length / this.pageSize));
    this.page = Math.min(Math.max(0, page), pages - 1);
    this.render();
  };

  DataTable.prototype.render = function () {
    var columns = this.spec.columns;
    var start = this.page * this.pageSize;
    var slice = this.view.slice(start, start + this.pageSize);
    var body = el("tbody");
    var rows = this.rows;
    var more = this.spec.more || null;
    slice.forEach(function (i) {
      var tr = el("tr");
      columns.forEach(function (col, c) {
        var td = el("td", "col-" + col.type);
        RENDER[col.type](td, rows[i][c], more);
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    if (slice.length === 0) {
      var tr = el("tr", "empty");
      var td = el("td", null, this.rows.length ? "No rows match the filter." : "Nothing to report.");
      td.colSpan = columns.length;
      tr.appendChild(td);
      body.appendChild(tr);
    }
    this.tbody.replaceWith(body);
    this.tbody = body;
    var pages = Math.max(1, Math.ceil(this.view.length / this.pageSize));
    this.count.textContent = this.view.length === this.rows.length
      ? numberFormat.format(this.rows.length) + " rows"
      : numberFormat.format(this.view.length) + " of " + numberFormat.format(this.rows.length) + " rows";
    this.pageInfo.textContent = "Page " + numberFormat.format(this.page + 1) + " of " + numberFormat.format(pages);
    this.prev.disabled = this.page === 0;
    this.next.disabled = this.page >= pages - 1;
    this.pager.hidden = this.rows.length <= PAGE_SIZES[0];
    this.root.setAttribute("data-shown", String(this.view.length));
  };

  var specs = {};
  data.tables.forEach(function (spec) { specs[spec.id] = spec; });
  var tables = document.querySelectorAll("[data-table]");
  Array.prototype.forEach.call(tables, function (root) {
    var spec = specs[root.getAttribute("data-table")];
    if (spec) new DataTable(root, spec);
  });
  document.documentElement.setAttribute("data-ready", "1");
})();
