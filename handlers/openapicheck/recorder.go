package openapicheck

import (
	"bytes"
	"fmt"
	"mime"
	"sort"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
)

// Recorder checks JSON answers against a document and counts them by route.
// It is safe for concurrent use.
type Recorder struct {
	doc *Doc

	mu sync.Mutex
	// checked counts the checked answers by route ("GET /api/v1/jobs/:id")
	// and whether they were a success (2xx).
	checked map[string]int
	success map[string]int
	answers int
}

// Doc is the document the recorder checks against.
func (r *Recorder) Doc() *Doc { return r.doc }

// NewRecorder returns a recorder checking answers against doc.
func NewRecorder(doc *Doc) *Recorder {
	return &Recorder{doc: doc, checked: map[string]int{}, success: map[string]int{}}
}

// Middleware returns the gin middleware that checks each JSON answer of a
// matched route against the document's schema of its route and status, and
// hands each violation to fail (a test's Errorf). An answer of no route (an
// unknown path under /api/, a method no route of the path takes) is checked
// against the error schema.
func (r *Recorder) Middleware(fail func(format string, args ...any)) gin.HandlerFunc {
	return func(c *gin.Context) {
		w := &teeWriter{ResponseWriter: c.Writer}
		c.Writer = w
		c.Next()
		if !w.json {
			return
		}
		method, route := c.Request.Method, c.FullPath()
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
