package pages

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// postRun records what a form post did.
type postRun struct {
	shown   []int // the statuses show was called with
	acted   bool
	checked bool
}

// newTestPages makes pages with no service: enough for the form helper and
// the partials.
func newTestPages(t *testing.T) *Pages {
	t.Helper()
	p, err := New(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{SessionKey: []byte(strings.Repeat("k", 32))})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHandleForm: a form with mistakes is shown again (400) with the
// service's own check added and is not acted on; a refusal is shown beside
// its field with its status (or the spec's); a fault gets the error page and
// no form; success flashes and redirects with 303; an act that answered
// itself is left alone.
func TestHandleForm(t *testing.T) {
	gin.SetMode(gin.TestMode)
	p := newTestPages(t)
	refusal := &models.Error{Code: models.CodeAlreadyUsed, Field: "name", Message: "is used"}
	fault := errors.New("disk on fire")
	for _, tc := range []struct {
		name       string
		mistake    bool
		recheck    error
		actErr     error
		out        outcome
		status     func(error) int
		wantShown  []int
		wantActed  bool
		wantErrs   map[string]string
		wantCode   int
		wantTo     string
		wantCookie bool
	}{
		{name: "mistake", mistake: true, recheck: models.Invalid("name", "must be set"),
			wantShown: []int{400}, wantErrs: map[string]string{"count": "Enter a number.", "name": "This must be set."}, wantCode: 200},
		{name: "mistake without recheck error", mistake: true,
			wantShown: []int{400}, wantErrs: map[string]string{"count": "Enter a number."}, wantCode: 200},
		{name: "refused", actErr: refusal, wantActed: true,
			wantShown: []int{409}, wantErrs: map[string]string{"name": "This is used."}, wantCode: 200},
		{name: "refused with its own status", actErr: refusal, status: func(error) int { return 400 }, wantActed: true,
			wantShown: []int{400}, wantErrs: map[string]string{"name": "This is used."}, wantCode: 200},
		{name: "fault", actErr: fault, wantActed: true, wantErrs: map[string]string{}, wantCode: 500},
		{name: "done", out: done("Saved.", "/admin/x"), wantActed: true, wantErrs: map[string]string{},
			wantCode: http.StatusSeeOther, wantTo: "/admin/x", wantCookie: true},
		{name: "not done", out: outcome{failed: "Not saved.", to: "/admin/y"}, wantActed: true, wantErrs: map[string]string{},
			wantCode: http.StatusSeeOther, wantTo: "/admin/y", wantCookie: true},
		{name: "answered by act", wantActed: true, wantErrs: map[string]string{}, wantCode: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(w)
			c.Request = httptest.NewRequest(http.MethodPost, "/admin/x", nil)
			var run postRun
			errs := formErrors{}
			handleForm(p, c, formPost[string]{errs: errs,
				read: func() string {
					if tc.mistake {
						errs.add("count", "Enter a number.")
					}
					return "typed"
				},
				recheck: func(in string) error {
					if in != "typed" {
						t.Errorf("recheck got %q", in)
					}
					run.checked = true
					return tc.recheck
				},
				act: func(in string) (outcome, error) {
					if in != "typed" {
						t.Errorf("act got %q", in)
					}
					run.acted = true
					return tc.out, tc.actErr
				},
				refused: func(_ string, err error) bool { return errs.fromError(err, map[string]string{"name": "name"}) },
				status:  tc.status,
				show:    func(status int) { run.shown = append(run.shown, status) },
			})
			c.Writer.WriteHeaderNow() // as gin does after the handlers
			if run.acted != tc.wantActed || run.checked != tc.mistake {
				t.Errorf("acted %v, rechecked %v", run.acted, run.checked)
			}
			if !equalInts(run.shown, tc.wantShown) {
				t.Errorf("shown with %v, want %v", run.shown, tc.wantShown)
			}
			if len(errs) != len(tc.wantErrs) {
				t.Errorf("errors %v, want %v", errs, tc.wantErrs)
			}
			for k, v := range tc.wantErrs {
				if errs[k] != v {
					t.Errorf("errors %v, want %v", errs, tc.wantErrs)
				}
			}
			if w.Code != tc.wantCode || w.Header().Get("Location") != tc.wantTo {
				t.Errorf("answer %d to %q, want %d to %q", w.Code, w.Header().Get("Location"), tc.wantCode, tc.wantTo)
			}
			if got := w.Header().Get("Set-Cookie") != ""; got != tc.wantCookie {
				t.Errorf("flash cookie set: %v, want %v", got, tc.wantCookie)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestHandleFormFlash: the flash of an outcome is kept in the session for
// the next page, as done or as not done.
func TestHandleFormFlash(t *testing.T) {
	gin.SetMode(gin.TestMode)
	p := newTestPages(t)
	for _, tc := range []struct {
		out        outcome
		key, other string
		msg        string
	}{
		{done("Saved “x”.", "/a"), flashOK, flashErr, "Saved “x”."},
		{outcome{failed: "Not paused: too late.", to: "/a"}, flashErr, flashOK, "Not paused: too late."},
	} {
		w := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(w)
		c.Request = httptest.NewRequest(http.MethodPost, "/a", nil)
		handleForm(p, c, formPost[noInput]{read: readNothing,
			act:  func(noInput) (outcome, error) { return tc.out, nil },
			show: func(int) { t.Error("shown") }})
		sess := p.session(c)
		got, other := sess.Flashes(tc.key), sess.Flashes(tc.other)
		if len(got) != 1 || got[0] != tc.msg || len(other) != 0 {
			t.Errorf("flashes %v and %v, want [%s] and none", got, other, tc.msg)
		}
	}
}
