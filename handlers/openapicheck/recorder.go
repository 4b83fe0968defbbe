package openapicheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
)

// Recorder checks JSON answers against a document and counts them by route;
// it checks requests too (see Middleware). It is safe for concurrent use.
type Recorder struct {
	doc *Doc
	// stated are the rules the document states in words only, by
	// "METHOD route field" (or "* * field"): a request the schema takes
	// that the server refuses 400 naming one of them is no violation.
	stated map[string]string

	mu sync.Mutex
	// checked counts the checked answers by route ("GET /api/v1/jobs/:id")
	// and whether they were a success (2xx).
	checked map[string]int
	success map[string]int
	answers int
	// requests counts the requests checked, refused the 400s among them.
	requests, refused int
}

// Doc is the document the recorder checks against.
func (r *Recorder) Doc() *Doc { return r.doc }

// NewRecorder returns a recorder checking answers against doc; stated are
// the rules the document states in words only (see Recorder.stated).
func NewRecorder(doc *Doc, stated map[string]string) *Recorder {
	return &Recorder{doc: doc, stated: stated, checked: map[string]int{}, success: map[string]int{}}
}

// Middleware returns the gin middleware that checks each JSON answer of a
// matched route against the document's schema of its route and status, and
// hands each violation to fail (a test's Errorf). An answer of no route (an
// unknown path under /api/, a method no route of the path takes) is checked
// against the error schema. A request the server refuses 400 must be one
// the document's schemas refuse too (CheckRequest), or one refused by a rule
// the document states in words (the recorder's stated rules): else a client
// valid by the document would be refused.
func (r *Recorder) Middleware(fail func(format string, args ...any)) gin.HandlerFunc {
	return func(c *gin.Context) {
		req, body := keepRequest(c)
		w := &teeWriter{ResponseWriter: c.Writer}
		c.Writer = w
		c.Next()
		if !w.json {
			return
		}
		method, route := c.Request.Method, c.FullPath()
		if route != "" {
			req.Route = route
			r.checkRefusal(req, body, w.Status(), w.body.Bytes(), fail)
		}
		var errs []string
		if route == "" {
			errs = r.doc.Validate(r.doc.errorSchema(), decode(w.body.Bytes()))
		} else {
			errs = r.doc.CheckAnswer(method, route, w.Status(), w.body.Bytes())
		}
		r.record(method+" "+route, w.Status())
		for _, e := range errs {
			fail("the answer %d of %s %s (route %q) does not match the OpenAPI document: %s\n\tbody: %.600s",
				w.Status(), method, c.Request.URL.Path, route, e, w.body.String())
		}
	}
}

// errorSchema is the schema of the 404 answer shared by the routes.
func (d *Doc) errorSchema() map[string]any {
	s, _ := d.lookup("#/components/responses/404")["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	return s
}

// decode decodes a body as CheckAnswer does; a body that is not JSON fails
// any schema.
func decode(b []byte) any {
	var v any
	if err := jsonDecoder(b).Decode(&v); err != nil {
		return fmt.Sprintf("not JSON: %q", b)
	}
	return v
}

func (r *Recorder) record(route string, status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers++
	r.checked[route]++
	if status >= 200 && status < 300 {
		r.success[route]++
	}
}

// Answers returns how many answers were checked, and of how many routes.
func (r *Recorder) Answers() (answers, routes int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for route := range r.checked {
		if !strings.HasSuffix(route, " ") { // answers of no route
			routes++
		}
	}
	return r.answers, routes
}

// Unchecked returns the routes among want ("METHOD path") of which no
// success answer was checked.
func (r *Recorder) Unchecked(want []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, route := range want {
		if r.success[route] == 0 {
			out = append(out, route)
		}
	}
	sort.Strings(out)
	return out
}

// teeWriter keeps a copy of a JSON body as it is written.
type teeWriter struct {
	gin.ResponseWriter
	body bytes.Buffer
	json bool
}

func (w *teeWriter) keep(b []byte) {
	if w.body.Len() == 0 {
		mt, _, _ := mime.ParseMediaType(w.Header().Get("Content-Type"))
		w.json = mt == "application/json"
	}
	if w.json {
		w.body.Write(b)
	}
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.keep(b)
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) WriteString(s string) (int, error) {
	w.keep([]byte(s))
	return w.ResponseWriter.WriteString(s)
}

// keepRequest keeps what CheckRequest reads of a request; its body is kept
// as the handlers read it (a guard may count a request in flight while its
// body is still coming), the rest read once the answer is made.
func keepRequest(c *gin.Context) (Request, *teeBody) {
	req := Request{Method: c.Request.Method, Path: map[string]string{}, Query: c.Request.URL.Query(), Header: c.Request.Header.Clone()}
	for _, p := range c.Params {
		req.Path[p.Key] = p.Value
	}
	body := &teeBody{}
	if c.Request.Body != nil && c.Request.Body != http.NoBody {
		body.ReadCloser = c.Request.Body
		c.Request.Body = body
	}
	return req, body
}

// teeBody keeps a copy of what is read of a body.
type teeBody struct {
	io.ReadCloser
	kept bytes.Buffer
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.kept.Write(p[:n])
	return n, err
}

// all is the whole body: what was read, and the rest.
func (b *teeBody) all() []byte {
	if b.ReadCloser != nil {
		rest, _ := io.ReadAll(b.ReadCloser)
		b.kept.Write(rest)
	}
	return b.kept.Bytes()
}

// listIndex is an index in a field's name: lines[2].quantity is
// lines[].quantity in the stated rules.
var listIndex = regexp.MustCompile(`\[\d+\]`)

// checkRefusal fails a 400 answer to a request the document takes, unless
// the field it names has a rule the document states in words.
func (r *Recorder) checkRefusal(req Request, body *teeBody, status int, answer []byte, fail func(format string, args ...any)) {
	r.mu.Lock()
	r.requests++
	if status == http.StatusBadRequest {
		r.refused++
	}
	r.mu.Unlock()
	if status != http.StatusBadRequest {
		return
	}
	req.Body = body.all()
	if len(r.doc.CheckRequest(req)) > 0 {
		return
	}
	var out struct {
		Field, Error string
	}
	_ = json.Unmarshal(answer, &out)
	field := listIndex.ReplaceAllString(out.Field, "[]")
	for _, k := range []string{req.Method + " " + req.Route + " " + field, "* * " + field} {
		if _, ok := r.stated[k]; ok {
			return
		}
	}
	fail("the request %s %s was refused 400 (field %q: %s) but the OpenAPI document takes it: "+
		"state the rule as a schema keyword, or in words and in the stated rules\n\tbody: %.600s",
		req.Method, req.Route, out.Field, out.Error, req.Body)
}

// Requests returns how many requests were checked, and how many of them were
// refused 400.
func (r *Recorder) Requests() (requests, refused int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, r.refused
}
