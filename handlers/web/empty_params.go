package web

import (
	"net/http"

	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// RefuseEmptyParams returns the middleware that answers 400 naming the first
// query or header parameter of the row sent with an empty value (?limit=,
// an empty Idempotency-Key:), or nil when the row has none. No parameter's
// schema takes an empty value, and reading one as left out would do what the
// caller did not ask (docs/result-codes.md).
func RefuseEmptyParams(rt Route) gin.HandlerFunc {
	var query, header []string
	for _, p := range rt.Query {
		query = append(query, p.Name)
	}
	for _, p := range rt.Header {
		header = append(header, http.CanonicalHeaderKey(p.Name))
	}
	if rt.Idempotent() {
		header = append(header, IdempotencyKeyHeader)
	}
	if len(query) == 0 && len(header) == 0 {
		return nil
	}
	return func(c *gin.Context) {
		if name, empty := emptyParam(c.Request, query, header); empty {
			RespondError(c, models.Invalid(name, "must not be empty: leave the parameter out instead"))
			c.Abort()
		}
	}
}

// emptyParam names the first of the query and header parameters sent with
// an empty value.
func emptyParam(r *http.Request, query, header []string) (string, bool) {
	q := r.URL.Query()
	for _, name := range query {
		for _, v := range q[name] {
			if v == "" {
				return name, true
			}
		}
	}
	for _, name := range header {
		for _, v := range r.Header[name] {
			if v == "" {
				return name, true
			}
		}
	}
	return "", false
}
