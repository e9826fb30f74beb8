// Upload page: dropping files on the drop zone puts them in the file input
// (the form then posts them as usual) and lists their names.
(function () {
  "use strict";
  const zone = document.getElementById("dropzone");
  const input = document.getElementById("file-input");
  const chosen = document.getElementById("chosen");

  function listChosen() {
    chosen.replaceChildren();
    for (const file of input.files) {
      const item = document.createElement("li");
      item.textContent = file.name + " (" + file.size + " bytes)";  // textContent: names are untrusted
      chosen.appendChild(item);
    }
  }

  zone.addEventListener("dragover", function (event) {
    event.preventDefault();
    zone.classList.add("dragging");
  });
  zone.addEventListener("dragleave", function () {
    zone.classList.remove("dragging");
  });
  zone.addEventListener("drop", function (event) {
    event.preventDefault();
    zone.classList.remove("dragging");
    input.files = event.dataTransfer.files;
    listChosen();
  });
  input.addEventListener("change", listChosen);
})();
