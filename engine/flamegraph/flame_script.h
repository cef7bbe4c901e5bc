// The script embedded in every flamegraph SVG: click a frame to zoom into it, "Reset Zoom" (or
// Escape) to go back, "Search" (or Ctrl-F) for a regular expression whose matches are highlighted
// with the share of the visible width they cover, and the frame under the mouse described at the
// bottom. Written for profsh; it reads the frames' geometry from the SVG itself.
#pragma once

namespace profsh {

inline constexpr char kFlameScript[] = R"js(
"use strict";
var svg, frames, details, searchButton, matched, unzoomButton;
var xpad, fontSize, fontWidth, fullWidth, searchColor, currentSearch = null;

function init(evt) {
  svg = document.documentElement;
  frames = document.getElementById("frames");
  details = document.getElementById("details").firstChild;
  searchButton = document.getElementById("search");
  matched = document.getElementById("matched");
  unzoomButton = document.getElementById("unzoom");
  xpad = parseFloat(svg.getAttribute("data-xpad"));
  fontSize = parseFloat(svg.getAttribute("data-font-size"));
  fontWidth = parseFloat(svg.getAttribute("data-font-width"));
  searchColor = svg.getAttribute("data-search-color");
  fullWidth = parseFloat(svg.getAttribute("width")) - 2 * xpad;
  for (var i = 0; i < frames.children.length; i++) {
    var g = frames.children[i], r = g.querySelector("rect");
    // Geometry in tenths of a pixel, the grid the SVG is written on, so comparisons are exact.
    g.origX = Math.round(parseFloat(r.getAttribute("x")) * 10);
    g.origW = Math.round(parseFloat(r.getAttribute("width")) * 10);
    g.origFill = r.getAttribute("fill");
    g.depth = parseInt(g.getAttribute("data-depth"), 10);
  }
}

function frameOf(node) {
  while (node && node !== svg) {
    if (node.parentNode && node.parentNode.id === "frames") return node;
    node = node.parentNode;
  }
  return null;
}

function nameOf(g) {
  var t = g.querySelector("title").textContent;
  var cut = t.lastIndexOf(" (");
  return cut < 0 ? t : t.substring(0, cut);
}

function place(g, x, w) {
  var r = g.querySelector("rect"), t = g.querySelector("text");
  r.setAttribute("x", x.toFixed(1));
  r.setAttribute("width", w.toFixed(1));
  t.setAttribute("x", (x + 3).toFixed(2));
  var name = nameOf(g), chars = Math.floor(w / (fontSize * fontWidth));
  if (chars < 3) {
    t.textContent = "";
  } else {
    t.textContent = name.length > chars ? name.substring(0, chars - 2) + ".." : name;
  }
}

function zoom(target) {
  var x = target.origX, w = target.origW, ratio = fullWidth / (w / 10);
  for (var i = 0; i < frames.children.length; i++) {
    var g = frames.children[i];
    g.classList.remove("parent");
    g.classList.remove("hide");
    if (g.depth < target.depth && g.origX <= x && g.origX + g.origW >= x + w) {
      g.classList.add("parent");
      place(g, xpad, fullWidth);
    } else if (g.depth >= target.depth && g.origX >= x && g.origX + g.origW <= x + w) {
      place(g, xpad + (g.origX - x) / 10 * ratio, g.origW / 10 * ratio);
    } else {
      g.classList.add("hide");
    }
  }
  unzoomButton.classList.remove("hide");
  if (currentSearch !== null) search(currentSearch);
}

function unzoom() {
  for (var i = 0; i < frames.children.length; i++) {
    var g = frames.children[i];
    g.classList.remove("parent");
    g.classList.remove("hide");
    place(g, g.origX / 10, g.origW / 10);
  }
  unzoomButton.classList.add("hide");
  if (currentSearch !== null) search(currentSearch);
}

function search(term) {
  var re;
  try {
    re = new RegExp(term);
  } catch (e) {
    alert("Not a regular expression: " + e.message);
    return;
  }
  currentSearch = term;
  var spans = [];
  for (var i = 0; i < frames.children.length; i++) {
    var g = frames.children[i], r = g.querySelector("rect");
    if (!g.classList.contains("hide") && re.test(nameOf(g))) {
      r.setAttribute("fill", searchColor);
      var x = parseFloat(r.getAttribute("x"));
      spans.push([x, x + parseFloat(r.getAttribute("width"))]);
    } else {
      r.setAttribute("fill", g.origFill);
    }
  }
  spans.sort(function (a, b) { return a[0] - b[0]; });
  var covered = 0, end = -Infinity;
  for (var k = 0; k < spans.length; k++) {
    if (spans[k][0] >= end) {
      covered += spans[k][1] - spans[k][0];
      end = spans[k][1];
    } else if (spans[k][1] > end) {
      covered += spans[k][1] - end;
      end = spans[k][1];
    }
  }
  matched.firstChild.nodeValue = "Matched: " + (100 * covered / fullWidth).toFixed(1) + "%";
  matched.classList.remove("hide");
  searchButton.classList.add("show");
  searchButton.firstChild.nodeValue = "Reset Search";
}

function resetSearch() {
  currentSearch = null;
  for (var i = 0; i < frames.children.length; i++) {
    var g = frames.children[i];
    g.querySelector("rect").setAttribute("fill", g.origFill);
  }
  matched.classList.add("hide");
  searchButton.classList.remove("show");
  searchButton.firstChild.nodeValue = "Search";
}

function askSearch() {
  if (currentSearch !== null) {
    resetSearch();
    return;
  }
  var term = prompt("Search for (regular expression):", "");
  if (term) search(term);
}

window.addEventListener("click", function (e) {
  var g = frameOf(e.target);
  if (g) {
    zoom(g);
  } else if (e.target.id === "unzoom") {
    unzoom();
  } else if (e.target.id === "search") {
    askSearch();
  }
}, false);
window.addEventListener("mouseover", function (e) {
  var g = frameOf(e.target);
  if (g) details.nodeValue = "Function: " + g.querySelector("title").textContent;
}, false);
window.addEventListener("mouseout", function (e) {
  if (frameOf(e.target)) details.nodeValue = " ";
}, false);
window.addEventListener("keydown", function (e) {
  if ((e.ctrlKey || e.metaKey) && e.key === "f") {
    e.preventDefault();
    askSearch();
  } else if (e.key === "Escape") {
    unzoom();
  }
}, false);
)js";

}  // namespace profsh
