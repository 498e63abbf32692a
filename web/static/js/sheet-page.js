// The stand-alone sheet page: a print button (inline handlers are refused by the page's CSP).
document.getElementById("print-button")?.addEventListener("click", () => window.print());
