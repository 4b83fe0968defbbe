// Package client is the Go client of couponsvc's JSON API.
//
// Every operation of the API is a method of *Client (operations.gen.go),
// taking and returning the named types of the OpenAPI document
// (types.gen.go); both files are generated from the document
// (`go generate ./client`). This file is the small part written by hand:
//
//   - every call takes a context;
//   - an error answer is a *Error carrying the result word
//     ("sold_out", "idempotency_mismatch"…), the field at fault and the
//     request id (errors.As, or IsResult);
//   - 429, 503, 409 in_progress and network errors are retried with
//     backoff, waiting at least the answer's Retry-After, but never past the
//     context's deadline: a wait that would pass it returns the *Error at
//     once (Error.Retryable says which answers are worth a retry); a
//     changing request keeps one Idempotency-Key across its retries, so a
//     retry never does the work twice, and a replayed answer is the first
//     one, marked (Replayed); with retries off (WithRetries(0), or
//     Retries(0) for one call) every answer comes back as it came, and a
//     changing request carries only the key the caller gives;
//   - lists that page by cursor are walked by iterators (Events).
//
// Webhook deliveries are verified by the sub-package client/webhook.
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls one couponsvc deployment with one credential. It is safe for
// concurrent use.
type Client struct {
	base       *url.URL
	token      string
	http       *http.Client
	maxRetries int
	backoff    time.Duration
	userAgent  string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (default: one with a 30 s timeout).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithRetries sets how many times a call is retried after a 429, a 503, a
// 409 in_progress or a network error (default 3). 0 never retries: each call is sent once and
// returns what came (a *Error for a 429 or a 503, the transport's error for
// a network error), for a caller that must see every outcome as it was or
// retries itself (a load generator, the fault tests); such a client invents
// no Idempotency-Key, since it never sends a request twice: give
// IdempotencyKey to make your own retry safe.
func WithRetries(n int) Option { return func(c *Client) { c.maxRetries = max(n, 0) } }

// WithBackoff sets the first wait between retries (default 200 ms); each
// next one doubles, with jitter, and never waits less than Retry-After.
func WithBackoff(d time.Duration) Option { return func(c *Client) { c.backoff = d } }

// New returns a client of the service at baseURL ("https://coupons.example")
// calling with the API token (role admin, cashier or app; "" for the public
// operations).
func New(baseURL, token string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q is not http(s)://host", baseURL)
	}
	c := &Client{base: u, token: token, http: &http.Client{Timeout: 30 * time.Second},
		maxRetries: 3, backoff: 200 * time.Millisecond, userAgent: "couponsvc-go-client"}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// CallOption changes one call.
type CallOption func(*callOptions)

type callOptions struct {
	idempotencyKey string
	requestID      string
	status         *int
	replayed       *bool
	retries        *int
}

// IdempotencyKey sets the call's Idempotency-Key (default: a random one per
// call, kept across its retries; none when the call is never retried). Give
// your own to make a retry of yours, after the client gave up, safe too: the
// same key and body get the first answer, marked as a replay (Replayed).
func IdempotencyKey(key string) CallOption { return func(o *callOptions) { o.idempotencyKey = key } }

// RequestID sets the call's X-Request-ID, which the service's logs carry.
func RequestID(id string) CallOption { return func(o *callOptions) { o.requestID = id } }

// Status stores the HTTP status of the call's last answer in *n (0 when no
// answer came): a replay of an Idempotency-Key's first answer is a 200
// even where the first was a 201. An error answer's status is in its
// *Error too.
func Status(n *int) CallOption { return func(o *callOptions) { o.status = n } }

// Replayed stores in *b whether the call's answer is a replay of the first
// answer of its Idempotency-Key (the service's Idempotent-Replayed header,
// also the answer's Duplicate field): the work was done once, by an earlier
// send of the same call, and the answer is that send's, result word
// included.
func Replayed(b *bool) CallOption { return func(o *callOptions) { o.replayed = b } }

// Retries sets how many times this call is retried, overriding WithRetries
// (0: sent once, and without a key of the client's own).
func Retries(n int) CallOption {
	return func(o *callOptions) { n := max(n, 0); o.retries = &n }
}

// Error is an error answer of the service.
type Error struct {
	// Status is the HTTP status; Code and Result the result code and word
	// (docs/result-codes.md); Message the text for people.
	Status  int
	Code    int64
	Result  string
	Message string
	// Field is the request field at fault (invalid_request and a few
	// others); Fields every one when there were several.
	Field  string
	Fields []FieldError
	// RequestID is the X-Request-ID of the answer: quote it to the
	// service's operators.
	RequestID string
	// RetryAfter is the answer's Retry-After (0 when none).
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	s := fmt.Sprintf("couponsvc: %d %s: %s", e.Status, e.Result, e.Message)
	if e.RequestID != "" {
		s += " (request " + e.RequestID + ")"
	}
	return s
}

// Retryable reports whether the same call may succeed if sent again later,
// with the same Idempotency-Key: a 429 (rate_limited, busy), a 503
// (unavailable) or a 409 in_progress (the first request with the key still
// runs). RetryAfter says how long to wait first.
func (e *Error) Retryable() bool {
	return e.Status == http.StatusTooManyRequests || e.Status == http.StatusServiceUnavailable ||
		(e.Status == http.StatusConflict && e.Result == ResultInProgress)
}

// IsResult reports whether err is an error answer with that result word.
func IsResult(err error, result string) bool {
	var e *Error
	return errors.As(err, &e) && e.Result == result
}

// request is one operation's call, as operations.gen.go builds it.
type request struct {
	method, path string
	query        url.Values
	body         any
	csv          io.Reader
	idempotent   bool
	// retryable: safe to send again (a GET, a dry run, or with its
	// Idempotency-Key), as the document says.
	retryable bool
}

// do calls the service and decodes a success answer into out.
func (c *Client) do(ctx context.Context, req request, out any, opts []CallOption) error {
	resp, err := c.send(ctx, req, opts)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("couponsvc: %s %s: the answer is not the documented JSON: %w", req.method, req.path, err)
	}
	return nil
}

// stream calls the service and returns a success answer's body unread.
func (c *Client) stream(ctx context.Context, req request, opts []CallOption) (io.ReadCloser, error) {
	resp, err := c.send(ctx, req, opts)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// send sends the request, retrying a 429, a 503 or a network error; it
// returns a 2xx answer or the error.
func (c *Client) send(ctx context.Context, req request, opts []CallOption) (*http.Response, error) {
	var o callOptions
	for _, opt := range opts {
		opt(&o)
	}
	maxRetries := c.maxRetries
	if o.retries != nil {
		maxRetries = *o.retries
	}
	// A key of our own only serves our retries: without them it would
	// only make the service store an answer nobody asks for again.
	if req.idempotent && o.idempotencyKey == "" && maxRetries > 0 {
		o.idempotencyKey = newKey()
	}
	var body []byte
	contentType := ""
	switch {
	case req.body != nil:
		b, err := json.Marshal(req.body)
		if err != nil {
			return nil, err
		}
		body, contentType = b, "application/json"
	case req.csv != nil:
		// Read once so that a retry sends the same bytes.
		b, err := io.ReadAll(req.csv)
		if err != nil {
			return nil, err
		}
		body, contentType = b, "text/csv"
	}
	// The generated methods escaped the path's parameters already.
	u := *c.base
	escaped := c.base.EscapedPath() + req.path
	u.Path, _ = url.PathUnescape(escaped)
	u.RawPath = escaped
	if len(req.query) > 0 {
		u.RawQuery = req.query.Encode()
	}
	// A request that changes something is retried only with its key: the
	// service then answers a retry of work done with the first answer.
	retryable := req.retryable
	for attempt := 0; ; attempt++ {
		hr, err := http.NewRequestWithContext(ctx, req.method, u.String(), bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		if contentType != "" {
			hr.Header.Set("Content-Type", contentType)
		}
		hr.Header.Set("Accept", "application/json")
		hr.Header.Set("User-Agent", c.userAgent)
		if c.token != "" {
			hr.Header.Set("Authorization", "Bearer "+c.token)
		}
		if o.idempotencyKey != "" {
			hr.Header.Set("Idempotency-Key", o.idempotencyKey)
		}
		if o.requestID != "" {
			hr.Header.Set("X-Request-ID", o.requestID)
		}
		resp, err := c.http.Do(hr)
		if o.status != nil {
			*o.status = 0
			if err == nil {
				*o.status = resp.StatusCode
			}
		}
		if o.replayed != nil {
			*o.replayed = err == nil && resp.Header.Get("Idempotent-Replayed") == "true"
		}
		var wait time.Duration
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if !retryable || attempt >= maxRetries {
				return nil, err
			}
			wait = c.backoffFor(attempt)
			if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
				return nil, err
			}
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			return resp, nil
		default:
			apiErr := readError(resp)
			if !retryable || attempt >= maxRetries || !apiErr.Retryable() {
				return nil, apiErr
			}
			wait = max(apiErr.RetryAfter, c.backoffFor(attempt))
			// Waiting past the deadline would only end in the context's
			// error, losing the answer's status, Retry-After and request id.
			if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
				return nil, apiErr
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// backoffFor is the wait before retry attempt+1: the backoff doubled per
// attempt, with up to 50% of jitter so that many clients do not retry in
// step.
func (c *Client) backoffFor(attempt int) time.Duration {
	d := float64(c.backoff) * math.Pow(2, float64(attempt))
	return time.Duration(d * (0.5 + mrand.Float64()/2))
}

// readError reads an error answer into *Error (closing the body).
func readError(resp *http.Response) *Error {
	defer resp.Body.Close()
	e := &Error{Status: resp.StatusCode, RequestID: resp.Header.Get("X-Request-ID")}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	var body ErrorBody
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if json.Unmarshal(raw, &body) == nil && body.Result != "" {
		e.Code, e.Result, e.Message = body.Code, body.Result, body.Error
		if body.Field != nil {
			e.Field = *body.Field
		}
		e.Fields = body.Fields
		return e
	}
	e.Result, e.Message = "http_"+strconv.Itoa(resp.StatusCode), strings.TrimSpace(string(raw))
	return e
}

func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
