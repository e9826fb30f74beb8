// Small DOM helpers shared by the page scripts. Text goes in through
// textContent only: transcript text is untrusted.
"use strict";

window.LoopGuard = window.LoopGuard || {};

// A new element with an optional class name and text.
window.LoopGuard.el = function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
};

// A timestamp (ISO 8601 text or a Date) in the lab's one format,
// "2026-11-24 23:59" (UTC, 24 h), as `{{ value|date:"DATETIME_FORMAT" }}`
// renders it server-side.
window.LoopGuard.formatDateTime = function formatDateTime(value) {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return "—";
  return date.toISOString().slice(0, 16).replace("T", " ");
};
