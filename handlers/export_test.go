package handlers

import (
	"reflect"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/api"
	"github.com/couponsvc/couponsvc/handlers/pages"
	"github.com/couponsvc/couponsvc/handlers/web"
)

// RouteInfo is a row of the route tables (api/routes.go, pages/routes.go) as
// the tests see it.
type RouteInfo struct {
	Method, Path string
	// Roles may call the route; nil means anyone.
	Roles []string
	// API marks a route of the JSON API: it reads the credentials, so a bad
	// token is refused even where anyone may call.
	API bool
	// Page marks a page; Asset a page's static file, served to anyone.
	Page, Asset bool
	// Status is the success status (0 for a page: 200, or 303 after a post).
	Status int
	// Request is the JSON body's struct, or nil.
	Request reflect.Type
	// Raw marks a success answer in another format than JSON (a CSV);
	// its errors are JSON still.
	Raw bool
}

// RouteTable returns every row of the route tables, API first.
func RouteTable() []RouteInfo {
	var out []RouteInfo
	for _, rt := range append((*api.Server)(nil).Routes(), openAPIRoute(nil)) {
		out = append(out, RouteInfo{Method: rt.Method, Path: rt.Path, Roles: rt.Roles,
			API: strings.HasPrefix(rt.Path, web.APIPrefix), Status: rt.Status, Request: rt.Request, Raw: rt.Raw != nil})
	}
	for _, pr := range (*pages.Pages)(nil).Routes() {
		out = append(out, RouteInfo{Method: pr.Method, Path: pr.Path, Roles: pr.Roles, Page: true,
			Asset: pr.Asset, Status: pr.Status})
	}
	return out
}
