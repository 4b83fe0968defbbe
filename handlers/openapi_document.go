package handlers

import (
	"couponsvc/handlers/api"
	"couponsvc/handlers/pages"
	"couponsvc/handlers/web"
)

// OpenAPIDocument is the document the router serves at /api/openapi.json,
// made from the route tables without a service.
func OpenAPIDocument() []byte {
	rows := append((*api.Server)(nil).Routes(), openAPIRoute(nil))
	return web.OpenAPIJSON(append(rows, (*pages.Pages)(nil).Routes()...))
}
