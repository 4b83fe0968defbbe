package handlers

import (
	"reflect"
	"strings"
)

// RouteInfo is a row of the route tables (routes.go) as the tests see it.
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
}

// RouteTable returns every row of the route tables, API first.
func RouteTable() []RouteInfo {
	var out []RouteInfo
	for _, rt := range apiRoutes() {
		out = append(out, RouteInfo{Method: rt.method, Path: rt.path, Roles: rt.roles,
			API: strings.HasPrefix(rt.path, apiPrefix), Status: rt.status, Request: rt.request})
	}
	for _, pr := range pageRoutes() {
		out = append(out, RouteInfo{Method: pr.method, Path: pr.path, Roles: pr.roles, Page: true,
			Asset: pr.asset, Status: pr.status})
	}
	return out
}
