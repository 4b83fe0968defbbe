package handlers_test

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

	"couponsvc/models"
	"couponsvc/services"
	"couponsvc/services/admin"
)

// pageEnv is the real router, pages included, served over HTTP on fresh
// backends that hold the demo data.
type pageEnv struct {
	*fixture
	demo *admin.DemoData
	// passwords of the demo users, and of users the test adds.
	passwords map[string]string
}

// newPageEnv seeds the demo data and serves the router.
func newPageEnv(t *testing.T) *pageEnv {
	t.Helper()
	return newPageEnvWith(t, services.Config{})
}

// newPageEnvWith is newPageEnv with a service configuration of its own.
func newPageEnvWith(t *testing.T, cfg services.Config) *pageEnv {
	t.Helper()
	f := newFixture(t, withConfig(cfg), withSessionKey(), served())
	demo, err := f.Service.SeedDemo(context.Background())
	if err != nil || demo == nil {
		t.Fatalf("seed the demo data: %v %v", demo, err)
	}
	e := &pageEnv{fixture: f, demo: demo, passwords: map[string]string{}}
	for _, u := range demo.Users {
		e.passwords[u.Username] = u.Password
	}
	return e
}

// template returns the demo template whose name starts with prefix.
func (e *pageEnv) template(t *testing.T, prefix string) *models.Template {
	t.Helper()
	for _, tp := range e.demo.Templates {
		if strings.HasPrefix(tp.Name, prefix) {
			return tp
		}
	}
	t.Fatalf("no demo template named %q...", prefix)
	return nil
}

// addUser adds a user with a known password.
func (e *pageEnv) addUser(t *testing.T, username, role string) {
	t.Helper()
	pw := "pw-" + username + "-0123"
	if _, err := e.Service.CreateUser(context.Background(), "test", username, pw, role); err != nil {
		t.Fatalf("add user %s: %v", username, err)
	}
	e.passwords[username] = pw
}

// pageClient is a browser without a screen: it keeps cookies, sends the
// Origin header a browser sends, and does not follow redirects (so that
// tests see them).
type pageClient struct {
	t    *testing.T
	e    *pageEnv
	http *http.Client
}

func (e *pageEnv) client(t *testing.T) *pageClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &pageClient{t: t, e: e, http: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// page is an answer of the server.
type page struct {
	status int
	header http.Header
	body   string
}

func (p page) String() string {
	b := p.body
	if len(b) > 600 {
		b = b[:600] + "..."
	}
	return fmt.Sprintf("%d %s", p.status, b)
}

// location is the redirect target.
func (p page) location() string { return p.header.Get("Location") }

// text is the page's text without tags, spaces squeezed.
func (p page) text() string {
	s := regexp.MustCompile(`(?s)<script.*?</script>|<style.*?</style>|<[^>]*>`).ReplaceAllString(p.body, " ")
	return strings.Join(strings.Fields(html.UnescapeString(s)), " ")
}

func (c *pageClient) do(req *http.Request) page {
	c.t.Helper()
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return page{status: res.StatusCode, header: res.Header, body: string(b)}
}

func (c *pageClient) get(path string) page {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.e.srv.URL+path, nil)
	return c.do(req)
}

// post sends a form as a browser on this site would.
func (c *pageClient) post(path string, form url.Values) page {
	c.t.Helper()
	req, _ := http.NewRequest("POST", c.e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.e.srv.URL)
	return c.do(req)
}

// api sends a JSON API request with the session cookie, as the page's script
// does; csrf is the X-CSRF-Token header ("" for none).
func (c *pageClient) api(method, path, csrf string, headers map[string]string) page {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.e.srv.URL+path, nil)
	req.Header.Set("Origin", c.e.srv.URL)
	if csrf != "" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return c.do(req)
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)

// csrf reads the CSRF token of a page.
func (c *pageClient) csrf(path string) string {
	c.t.Helper()
	p := c.get(path)
	m := csrfMeta.FindStringSubmatch(p.body)
	if m == nil {
		c.t.Fatalf("GET %s has no CSRF token: %v", path, p)
	}
	return html.UnescapeString(m[1])
}

// login logs in through the login form and checks where it lands.
func (c *pageClient) login(username string) {
	c.t.Helper()
	token := c.csrf("/login")
	p := c.post("/login", url.Values{"csrf_token": {token}, "username": {username}, "password": {c.e.passwords[username]}})
	if p.status != http.StatusSeeOther {
		c.t.Fatalf("log in as %s: %v", username, p)
	}
}

// form posts a page form with the CSRF token of the page it is on.
func (c *pageClient) form(from, to string, form url.Values) page {
	c.t.Helper()
	form.Set("csrf_token", c.csrf(from))
	return c.post(to, form)
}

// claim claims a coupon from the shop page as the script does.
func (c *pageClient) claim(templateID int64, key string) page {
	c.t.Helper()
	return c.api("POST", fmt.Sprintf("/api/v1/templates/%d/claim", templateID), c.csrf("/"),
		map[string]string{"Idempotency-Key": key})
}

// cookies copies the client's cookies, for a test that replays them.
func (c *pageClient) cookies() []*http.Cookie {
	u, _ := url.Parse(c.e.srv.URL)
	return c.http.Jar.Cookies(u)
}

// countCoupons counts the coupons in the database.
func (e *pageEnv) countCoupons(t *testing.T) int64 {
	t.Helper()
	var n int64
	if err := e.Backends.DB.Model(&models.Coupon{}).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}
