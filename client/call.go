package client

import (
	"context"
	"iter"
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

// PageParams are the query parameters of a list paged by cursor: the
// items after the id After (nil: from the start), at most Limit of them
// (nil: the service's default).
type PageParams struct {
	After *int64
	Limit *int64
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

// pages walks a list paged by cursor (walk): get reads the page after
// *after, which pages sets before each call; items are its items and next
// cursor.
func pages[A, T any](after **int64, get func() (*A, error), items func(*A) ([]T, int64)) iter.Seq2[T, error] {
	return walk(func(a int64) ([]T, int64, error) {
		*after = &a
		page, err := get()
		if err != nil {
			return nil, 0, err
		}
		list, next := items(page)
		return list, next, nil
	}, deref(*after))
}
