// Renders the interface reference from the server's own OpenAPI document.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/v2/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    tryItOutEnabled: false,
    persistAuthorization: false,
  });
});
