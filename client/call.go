package client

import (
	"context"
	"net/url"
	"strconv"
)

// The helpers the generated methods (operations.gen.go) call: each method
// only builds its request.

// call sends req and decodes its success answer into a new T.
func call[T any](ctx context.Context, c *Client, req request, opts []CallOption) (*T, error) {
	var out T
	if err := c.do(ctx, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// pathInt is an integer path parameter.
func pathInt(n int64) string { return strconv.FormatInt(n, 10) }

// query builds the query of a request from name, value pairs: a required
// parameter is a string or an int64, an optional one a pointer (nil: left
// out), a flag a bool (sent as 1 when true).
func query(pairs ...any) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		name := pairs[i].(string)
		switch v := pairs[i+1].(type) {
		case string:
			q.Set(name, v)
		case int64:
			q.Set(name, strconv.FormatInt(v, 10))
		case *string:
			if v != nil {
				q.Set(name, *v)
			}
		case *int64:
			if v != nil {
				q.Set(name, strconv.FormatInt(*v, 10))
			}
		case bool:
			if v {
				q.Set(name, "1")
			}
		}
	}
	return q
}
