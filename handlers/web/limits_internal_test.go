package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

// limitedEngine returns an engine with limitRequest(timeout) in front of h.
func limitedEngine(timeout time.Duration, h gin.HandlerFunc) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.ContextWithFallback = true
	r.Use(LimitRequest(timeout))
	r.Any("/", h)
	return r
}

func TestRequestTimeout(t *testing.T) {
	for _, tc := range []struct {
		name     string
		timeout  time.Duration
		deadline time.Duration // 0: none
	}{
		{"Set", 50 * time.Millisecond, 50 * time.Millisecond},
		{"ZeroIsTheDefault", 0, DefaultRequestTimeout},
		{"NegativeIsNone", -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got time.Duration
			var hasDeadline bool
			start := time.Now()
			r := limitedEngine(tc.timeout, func(c *gin.Context) {
				var d time.Time
				d, hasDeadline = c.Request.Context().Deadline()
				got = d.Sub(start)
				c.Status(http.StatusNoContent)
			})
			r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
			switch {
			case tc.deadline == 0 && hasDeadline:
				t.Fatalf("deadline in %v, want none", got)
			case tc.deadline > 0 && (!hasDeadline || got < tc.deadline || got > tc.deadline+time.Second):
				t.Fatalf("deadline in %v (set %t), want about %v", got, hasDeadline, tc.deadline)
			}
		})
	}

	t.Run("WorkIsCancelled", func(t *testing.T) {
		var err error
		r := limitedEngine(30*time.Millisecond, func(c *gin.Context) {
			select {
			case <-c.Request.Context().Done():
				err = c.Request.Context().Err()
			case <-time.After(5 * time.Second):
			}
			c.Status(http.StatusServiceUnavailable)
		})
		start := time.Now()
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
			t.Fatalf("handler saw %v after %v, want the deadline after 30ms", err, time.Since(start))
		}
	})
}

// TestFormBodyLimit checks that the pages' forms are bounded like JSON bodies.
func TestFormBodyLimit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		size    int
		tooBig  bool
		wantLen int
	}{
		{"Small", 100, false, 100},
		{"AtTheLimit", maxRequestBytes - len("a="), false, maxRequestBytes - len("a=")},
		{"OverTheLimit", 10 << 20, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var parseErr error
			var got int
			r := limitedEngine(0, func(c *gin.Context) {
				parseErr = c.Request.ParseForm()
				got = len(c.Request.PostForm.Get("a"))
				c.Status(http.StatusNoContent)
			})
			body := url.Values{"a": {strings.Repeat("x", tc.size)}}.Encode()
			hr := httptest.NewRequest("POST", "/", strings.NewReader(body))
			hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.ServeHTTP(httptest.NewRecorder(), hr)
			var tooLarge *http.MaxBytesError
			if tc.tooBig != errors.As(parseErr, &tooLarge) {
				t.Fatalf("parse error %v, want too large: %t", parseErr, tc.tooBig)
			}
			if got != tc.wantLen {
				t.Fatalf("field of %d bytes read, want %d", got, tc.wantLen)
			}
		})
	}

	t.Run("Multipart", func(t *testing.T) {
		var parseErr error
		r := limitedEngine(0, func(c *gin.Context) {
			parseErr = c.Request.ParseMultipartForm(32 << 20)
			c.Status(http.StatusNoContent)
		})
		body := "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n" + strings.Repeat("x", 1<<20) + "\r\n--b--\r\n"
		hr := httptest.NewRequest("POST", "/", strings.NewReader(body))
		hr.Header.Set("Content-Type", "multipart/form-data; boundary=b")
		r.ServeHTTP(httptest.NewRecorder(), hr)
		if parseErr == nil {
			t.Fatal("a 1 MiB multipart form was read whole")
		}
	})
}
