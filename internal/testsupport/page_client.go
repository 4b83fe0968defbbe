package testsupport

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/admin"
)

// PageEnv is the real router, pages included, served over HTTP on fresh
// backends that hold the demo data.
type PageEnv struct {
	*Fixture
	Demo *admin.DemoData
	// Passwords of the demo users, and of users the test adds.
	Passwords map[string]string
}

// NewPageEnv seeds the demo data and serves the router.
func NewPageEnv(t *testing.T) *PageEnv {
	t.Helper()
	return NewPageEnvWith(t, services.Config{})
}

// NewPageEnvWith is NewPageEnv with a service configuration of its own.
func NewPageEnvWith(t *testing.T, cfg services.Config) *PageEnv {
	t.Helper()
	return newPageEnv(t, WithConfig(cfg))
}

// NewPageEnvLimited is NewPageEnv with the validate budgets of limits.
func NewPageEnvLimited(t *testing.T, limits handlers.Limits) *PageEnv {
	t.Helper()
	return newPageEnv(t, func(s *fixtureSetup) { s.opts.Limits = limits })
}

func newPageEnv(t *testing.T, option fixtureOption) *PageEnv {
	t.Helper()
	f := NewFixture(t, option, withSessionKey(), served())
	demo, err := f.Service.SeedDemo(context.Background())
	if err != nil || demo == nil {
		t.Fatalf("seed the demo data: %v %v", demo, err)
	}
	e := &PageEnv{Fixture: f, Demo: demo, Passwords: map[string]string{}}
	for _, u := range demo.Users {
		e.Passwords[u.Username] = u.Password
	}
	return e
}

// Template returns the demo template whose name starts with prefix.
func (e *PageEnv) Template(t *testing.T, prefix string) *models.Template {
	t.Helper()
	for _, tp := range e.Demo.Templates {
		if strings.HasPrefix(tp.Name, prefix) {
			return tp
		}
	}
	t.Fatalf("no demo template named %q...", prefix)
	return nil
}

// AddUser adds a user with a known password.
func (e *PageEnv) AddUser(t *testing.T, username, role string) {
	t.Helper()
	pw := "pw-" + username + "-0123"
	if _, err := e.Service.CreateUser(context.Background(), "test", username, pw, role); err != nil {
		t.Fatalf("add user %s: %v", username, err)
	}
	e.Passwords[username] = pw
}

// PageClient is a browser without a screen: it keeps cookies, sends the
// Origin header a browser sends, and does not follow redirects (so that
// tests see them).
type PageClient struct {
	t    *testing.T
	e    *PageEnv
	HTTP *http.Client
}

// Client returns a new browser without a screen, logged in as nobody.
func (e *PageEnv) Client(t *testing.T) *PageClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &PageClient{t: t, e: e, HTTP: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Page is an answer of the server.
type Page struct {
	Status int
	Header http.Header
	Body   string
}

// String shows the status and the start of the body.
func (p Page) String() string {
	b := p.Body
	if len(b) > 600 {
		b = b[:600] + "..."
	}
	return fmt.Sprintf("%d %s", p.Status, b)
}

// Location is the redirect target.
func (p Page) Location() string { return p.Header.Get("Location") }

// Text is the page's text without tags, spaces squeezed.
func (p Page) Text() string {
	s := regexp.MustCompile(`(?s)<script.*?</script>|<style.*?</style>|<[^>]*>`).ReplaceAllString(p.Body, " ")
	return strings.Join(strings.Fields(html.UnescapeString(s)), " ")
}

// Do sends a request and reads the whole answer.
func (c *PageClient) Do(req *http.Request) Page {
	c.t.Helper()
	res, err := c.HTTP.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return Page{Status: res.StatusCode, Header: res.Header, Body: string(b)}
}

// Get requests a page.
func (c *PageClient) Get(path string) Page {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.e.Srv.URL+path, nil)
	return c.Do(req)
}

// Post sends a form as a browser on this site would.
func (c *PageClient) Post(path string, form url.Values) Page {
	c.t.Helper()
	req, _ := http.NewRequest("POST", c.e.Srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.e.Srv.URL)
	return c.Do(req)
}

// API sends a JSON API request with the session cookie, as the page's script
// does; csrf is the X-CSRF-Token header ("" for none).
func (c *PageClient) API(method, path, csrf string, headers map[string]string) Page {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.e.Srv.URL+path, nil)
	req.Header.Set("Origin", c.e.Srv.URL)
	if csrf != "" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return c.Do(req)
}

// CSRFMeta finds the CSRF token in a page's meta tag.
var CSRFMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)

// CSRF reads the CSRF token of a page.
func (c *PageClient) CSRF(path string) string {
	c.t.Helper()
	p := c.Get(path)
	m := CSRFMeta.FindStringSubmatch(p.Body)
	if m == nil {
		c.t.Fatalf("GET %s has no CSRF token: %v", path, p)
	}
	return html.UnescapeString(m[1])
}

// Login logs in through the login form and checks where it lands.
func (c *PageClient) Login(username string) {
	c.t.Helper()
	token := c.CSRF("/login")
	p := c.Post("/login", url.Values{"csrf_token": {token}, "username": {username}, "password": {c.e.Passwords[username]}})
	if p.Status != http.StatusSeeOther {
		c.t.Fatalf("log in as %s: %v", username, p)
	}
}

// Form posts a page form with the CSRF token of the page it is on.
func (c *PageClient) Form(from, to string, form url.Values) Page {
	c.t.Helper()
	form.Set("csrf_token", c.CSRF(from))
	return c.Post(to, form)
}

// Claim claims a coupon from the shop page as the script does.
func (c *PageClient) Claim(templateID int64, key string) Page {
	c.t.Helper()
	return c.API("POST", fmt.Sprintf("/api/v1/templates/%d/claim", templateID), c.CSRF("/"),
		map[string]string{"Idempotency-Key": key})
}

// Cookies copies the client's cookies, for a test that replays them.
func (c *PageClient) Cookies() []*http.Cookie {
	u, _ := url.Parse(c.e.Srv.URL)
	return c.HTTP.Jar.Cookies(u)
}

// CountCoupons counts the coupons in the database.
func (e *PageEnv) CountCoupons(t *testing.T) int64 {
	t.Helper()
	var n int64
	if err := e.Backends.DB.Model(&models.Coupon{}).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}
