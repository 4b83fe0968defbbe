package web

import (
	"reflect"

	"github.com/gin-gonic/gin"
)

// APIPrefix is where the JSON API lives. Its routes find out who calls
// (authentication) before anything else.
const APIPrefix = "/api/v1/"

// SessionCookie is the cookie of a logged-in user of the pages; the API
// accepts it too.
const SessionCookie = "couponsvc_session"

// Route is one row of a route table: an endpoint of the JSON API, an
// operational endpoint, or a page (or a form post of one). The API's rows are
// in handlers/api/routes.go, the pages' in handlers/pages/routes.go; the
// router (handlers.NewRouter), the role checks and the OpenAPI document
// (OpenAPIJSON) are all made from them.
type Route struct {
	Method, Path string // gin's syntax: /templates/:id
	// Roles may call it; nil means anyone, also anonymous.
	Roles []string
	// Guard runs before the role check (the claim's admission control).
	Guard gin.HandlerFunc
	// Handler answers the request.
	Handler gin.HandlerFunc

	Tag, Summary, Description string
	// OperationID names the operation in the OpenAPI document; empty, it is
	// the handler method's name.
	OperationID string
	// Request is the JSON body's named struct (nil: no body); OptionalBody
	// says the body may be left out (a confirm), which the document then
	// does not mark required.
	Request      reflect.Type
	OptionalBody bool
	// Query and Header list the parameters besides the path's.
	Query, Header []Param
	// Status and Results of the success answer; Answer is the named struct
	// of its payload (the keys after code, result and error), which the
	// handler sends with Respond and the document describes by its name.
	Status  int
	Results []string
	Answer  reflect.Type
	// Duplicate200 adds a 200 "duplicate" answer beside a 201.
	Duplicate200 bool
	// OwnIdempotencyKey marks a route that keeps its Idempotency-Key itself
	// (a claim keeps it with its coupon); the others of the API that change
	// something take the generic one (Idempotency).
	OwnIdempotencyKey bool
	// DryRun marks a POST that changes nothing (a validation): a retry is
	// harmless, so it takes no Idempotency-Key.
	DryRun bool
	// Errors are the result words of the errors particular to this route, by
	// HTTP status; routeErrors adds those every route of its kind answers.
	Errors map[int][]string
	// Raw is a success answer that is not the JSON result body.
	Raw *RawAnswer
	// RawRequest is a request body in another format than JSON (a CSV
	// upload), beside Request or instead of it.
	RawRequest *RawAnswer
	// MaxBody bounds the request body instead of MaxBodyBytes (an upload);
	// Streams marks an answer streamed for as long as it takes (an export),
	// which the request timeout would cut.
	MaxBody int64
	Streams bool

	// Page marks a server-rendered page: its forms are posted as
	// application/x-www-form-urlencoded with a CSRF token, it answers HTML
	// (or a redirect after a successful post). Asset marks a page's static
	// file, served without the session and its CSRF check.
	Page, Asset bool
}

// Param is a query or header parameter.
type Param struct {
	Name, Description string
	Required          bool
	Schema            map[string]any
}

// RawAnswer is a success answer in another format than the JSON result body.
type RawAnswer struct {
	MediaType string
	Schema    map[string]any
}

// TypeOf names a request or answer type in a row.
func TypeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// Roles lists the roles of a row.
func Roles(r ...string) []string { return r }
