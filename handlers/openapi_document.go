package handlers

import (
	"github.com/couponsvc/couponsvc/handlers/api"
	"github.com/couponsvc/couponsvc/handlers/web"
)

// OpenAPIDocument is the document the router serves at /api/openapi.json,
// made from the route table of the API without a service. The pages are not
// in it: they are for people, not programs.
func OpenAPIDocument() []byte {
	return web.OpenAPIJSON(append((*api.Server)(nil).Routes(), openAPIRoute(nil)))
}
