package handlers

import (
	"net/http"

	"github.com/couponsvc/couponsvc/handlers/web"

	"github.com/gin-gonic/gin"
)

// openAPIRoute is the row of the OpenAPI document of every route of the
// router (web.OpenAPIJSON), made on first use by doc.
func openAPIRoute(doc func() []byte) web.Route {
	return web.Route{Method: "GET", Path: "/api/openapi.json", Tag: "operations", Summary: "This document", OperationID: "getOpenAPIDocument",
		Status: 200, Raw: &web.RawAnswer{MediaType: "application/json", Schema: map[string]any{"type": "object"}},
		Handler: func(c *gin.Context) {
			c.Header("Cache-Control", "public, max-age=300")
			c.Data(http.StatusOK, "application/json; charset=utf-8", doc())
		}}
}
