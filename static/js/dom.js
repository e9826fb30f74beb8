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
