// Renders the interface reference from the server's own OpenAPI document.
// validatorUrl: null keeps the page from calling validator.swagger.io: nothing leaves the LAN.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/v2/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    tryItOutEnabled: false,
    persistAuthorization: false,
    validatorUrl: null,
  });
});
