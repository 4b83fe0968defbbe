package testsupport

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/claims"

	"github.com/gin-gonic/gin"
)

// SessionHeader stands in for a page session in these tests: the router's
// SessionPrincipal option turns it into a logged-in shopper.
const SessionHeader = "X-Test-Shopper"

// TestShopperSession is the SessionPrincipal of the tests: the shopper named
// by sessionHeader.
func TestShopperSession(c *gin.Context) *models.Principal {
	if name := c.GetHeader(SessionHeader); name != "" {
		return &models.Principal{Name: name, Role: models.RoleShopper, UserID: name}
	}
	return nil
}

// Rig is a router over fresh backends with a campaign, a template with room
// for many claims, and an API token of each role.
type Rig struct {
	T *testing.T
	*Fixture
	Tokens     map[string]string // role → token
	CampaignID int64
	TemplateID int64
	Seq        int
	// Sessions holds the page sessions of the logged-in shoppers when the
	// Rig logs in through the pages (newSessionRig); nil uses the stand-in.
	Sessions map[string]*PageSession
}

// RigBootstrapToken is the bootstrap admin token of every rig.
const RigBootstrapToken = "rig-bootstrap-token-5f0c9a7e21"

// NewRig returns a rig whose shoppers are logged in by the stand-in session
// (sessionHeader), for tests of the API that are not about sessions.
func NewRig(t *testing.T, opts handlers.Options) *Rig {
	t.Helper()
	if opts.SessionPrincipal == nil {
		return NewRigWith(t, withOptions(opts), WithShopperHeader())
	}
	return NewRigWith(t, withOptions(opts))
}

// NewRigWith returns a rig on a fixture with the given options.
func NewRigWith(t *testing.T, options ...fixtureOption) *Rig {
	t.Helper()
	r := &Rig{T: t, Fixture: NewFixture(t, append([]fixtureOption{WithBootstrap(RigBootstrapToken)}, options...)...),
		Tokens: map[string]string{}}
	env := r.Env
	ctx := context.Background()
	camp, err := env.Service.CreateCampaign(ctx, "test", models.Campaign{Name: "Security"})
	if err != nil {
		t.Fatalf("create campaign: %v", err)
	}
	tpl, err := env.Service.CreateTemplate(ctx, "test", models.Template{CampaignID: camp.ID, Name: "Ten off",
		Kind: models.KindFixed, FaceValueCents: 1000, TotalStock: 10000, PerUserLimit: 100, ValidDays: 30})
	if err != nil {
		t.Fatalf("create template: %v", err)
	}
	r.CampaignID, r.TemplateID = camp.ID, tpl.ID
	for _, role := range []string{models.RoleAdmin, models.RoleCashier, models.RoleApp} {
		token, _, err := env.Service.CreateToken(ctx, "test", role, "rig-"+role)
		if err != nil {
			t.Fatalf("create %s token: %v", role, err)
		}
		r.Tokens[role] = token
	}
	return r
}

// Req describes one request of a test.
type Req struct {
	Method, Target string
	Auth           string // the Authorization header, if any
	Shopper        string // the logged-in shopper, if any
	NoCSRF         bool   // a page session sends no CSRF token
	Addr           string // the client address (default 192.0.2.1)
	Headers        map[string]string
	Body           string
	BodyReader     io.Reader // instead of body
}

// Answer is what the router answered.
type Answer struct {
	Status int
	Header http.Header
	Body   map[string]any // nil when the answer is not JSON
	Raw    string
}

// String shows the status and the raw body.
func (a Answer) String() string { return fmt.Sprintf("%d %s", a.Status, strings.TrimSpace(a.Raw)) }

// Code is the body's result code, or -1.
func (a Answer) Code() int {
	if v, ok := a.Body["code"].(float64); ok {
		return int(v)
	}
	return -1
}

// Bearer is the Authorization header of a token.
func Bearer(token string) string { return "Bearer " + token }

// Do sends a request through the router.
func (r *Rig) Do(q Req) Answer {
	r.T.Helper()
	var body io.Reader = strings.NewReader(q.Body)
	if q.BodyReader != nil {
		body = q.BodyReader
	}
	hr := httptest.NewRequest(q.Method, q.Target, body)
	if q.Body != "" || q.BodyReader != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if q.Addr != "" {
		hr.RemoteAddr = q.Addr + ":40000"
		if strings.Contains(q.Addr, ":") {
			hr.RemoteAddr = "[" + q.Addr + "]:40000"
		}
	}
	if q.Auth != "" {
		hr.Header.Set("Authorization", q.Auth)
	}
	var sess *PageSession
	switch {
	case q.Shopper != "" && r.Sessions != nil:
		sess = r.Session(q.Shopper)
		for _, c := range sess.Cookies {
			hr.AddCookie(c)
		}
		if q.Method != "GET" && q.Method != "HEAD" && !q.NoCSRF {
			hr.Header.Set("X-CSRF-Token", sess.CSRF)
		}
	case q.Shopper != "":
		hr.Header.Set(SessionHeader, q.Shopper)
	}
	for k, v := range q.Headers {
		hr.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	r.Router.ServeHTTP(rec, hr)
	if sess != nil {
		sess.keep(rec.Result().Cookies())
	}
	a := Answer{Status: rec.Code, Header: rec.Header(), Raw: rec.Body.String()}
	_ = json.Unmarshal(rec.Body.Bytes(), &a.Body)
	return a
}

// Claim claims a coupon of the rig's template for user through the API with
// the app token, under a fresh idempotency key.
func (r *Rig) Claim(user string, q Req) Answer {
	r.T.Helper()
	r.Seq++
	q.Method = http.MethodPost
	q.Target = fmt.Sprintf("/api/v1/templates/%d/claim", r.TemplateID)
	if q.Headers == nil {
		q.Headers = map[string]string{}
	}
	if _, ok := q.Headers["Idempotency-Key"]; !ok {
		q.Headers["Idempotency-Key"] = fmt.Sprintf("rig-%d", r.Seq)
	}
	if q.Auth == "" && q.Shopper == "" {
		q.Auth = Bearer(r.Tokens[models.RoleApp])
	}
	if q.Body == "" && q.BodyReader == nil && q.Shopper == "" {
		q.Body = `{"user_id":"` + user + `"}`
	}
	return r.Do(q)
}

// Coupon claims a coupon for user through the service and returns its code.
func (r *Rig) Coupon(user string) string {
	r.T.Helper()
	r.Seq++
	res, err := r.Env.Service.Claim(context.Background(), claims.ClaimRequest{
		TemplateID: r.TemplateID, UserID: user, IdempotencyKey: fmt.Sprintf("rig-coupon-%d", r.Seq)})
	if err != nil {
		r.T.Fatalf("claim a coupon for %s: %v", user, err)
	}
	return res.Coupon.Code
}

// PageSession is what a browser keeps of a logged-in user: the cookies and
// the page's CSRF token.
type PageSession struct {
	Cookies []*http.Cookie
	CSRF    string
}

// keep stores the cookies an answer sets, and forgets those it deletes.
func (s *PageSession) keep(set []*http.Cookie) {
	for _, c := range set {
		s.Cookies = slices.DeleteFunc(s.Cookies, func(old *http.Cookie) bool { return old.Name == c.Name })
		if c.MaxAge >= 0 && c.Value != "" {
			s.Cookies = append(s.Cookies, &http.Cookie{Name: c.Name, Value: c.Value})
		}
	}
}

// rigPassword is the password of the shoppers a session rig creates.
const rigPassword = "rig-shopper-pass-0042"

// pageCSRF finds the CSRF token of a page: its meta tag or a form's field.
var pageCSRF = regexp.MustCompile(`(?:name="csrf-token" content|name="csrf_token" value)="([^"]+)"`)

// Session returns the page session of shopper name, creating the user and
// logging in through POST /login, as a browser would, when needed.
func (r *Rig) Session(name string) *PageSession {
	r.T.Helper()
	if s := r.Sessions[name]; s != nil {
		return s
	}
	if _, err := r.Env.Service.CreateUser(context.Background(), "test", name, rigPassword, models.RoleShopper); err != nil &&
		!strings.Contains(err.Error(), "taken") {
		r.T.Fatalf("create shopper %s: %v", name, err)
	}
	s := &PageSession{}
	fetch := func(method, target string, form url.Values) (int, string) {
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		hr := httptest.NewRequest(method, target, body)
		if form != nil {
			hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for _, c := range s.Cookies {
			hr.AddCookie(c)
		}
		rec := httptest.NewRecorder()
		r.Router.ServeHTTP(rec, hr)
		s.keep(rec.Result().Cookies())
		return rec.Code, rec.Body.String()
	}
	token := func(doc string) string {
		m := pageCSRF.FindStringSubmatch(doc)
		if m == nil {
			r.T.Fatalf("no CSRF token on the page:\n%.1000s", doc)
		}
		return html.UnescapeString(m[1])
	}
	_, login := fetch("GET", "/login", nil)
	form := url.Values{"username": {name}, "password": {rigPassword}, "csrf_token": {token(login)}}
	if code, body := fetch("POST", "/login", form); code != http.StatusSeeOther {
		r.T.Fatalf("log in as %s: %d\n%.1000s", name, code, body)
	}
	// The login drops the CSRF cookie: the next page brings a fresh token.
	_, home := fetch("GET", "/", nil)
	s.CSRF = token(home)
	r.Sessions[name] = s
	return s
}

// Role is who sends a request of the security matrix.
type Role int

const (
	AsAnonymous    Role = iota
	AsShopper           // alice, logged in to the pages
	AsOtherShopper      // bob, logged in to the pages
	AsCashier
	AsApp
	AsAdmin
	AsRevoked   // an admin token that was revoked
	AsMalformed // a bearer token that was never issued
	NumRoles
)

var roleNames = [NumRoles]string{"anonymous", "shopper", "other_shopper", "cashier_token", "app_token",
	"admin_token", "revoked_token", "malformed_token"}

// String names the role in test names.
func (r Role) String() string { return roleNames[r] }

// Credentials returns the request fields that make who.
func (r *Rig) Credentials(who Role, revoked string) Req {
	switch who {
	case AsShopper:
		return Req{Shopper: "alice"}
	case AsOtherShopper:
		return Req{Shopper: "bob"}
	case AsCashier:
		return Req{Auth: Bearer(r.Tokens[models.RoleCashier])}
	case AsApp:
		return Req{Auth: Bearer(r.Tokens[models.RoleApp])}
	case AsAdmin:
		return Req{Auth: Bearer(r.Tokens[models.RoleAdmin])}
	case AsRevoked:
		return Req{Auth: Bearer(revoked)}
	case AsMalformed:
		return Req{Auth: Bearer("cps_" + strings.Repeat("A", 43))}
	}
	return Req{}
}

// Validate asks POST /api/v1/checkout/validate for the codes, for user
// (left out when empty), as q's caller (the app token when q has none).
func (r *Rig) Validate(user string, q Req, codes ...string) Answer {
	r.T.Helper()
	q.Method, q.Target = "POST", "/api/v1/checkout/validate"
	if q.Auth == "" && q.Shopper == "" {
		q.Auth = Bearer(r.Tokens[models.RoleApp])
	}
	body := `{"order_amount_cents":5000,"coupon_codes":["` + strings.Join(codes, `","`) + `"]`
	if user != "" {
		body += `,"user_id":"` + user + `"`
	}
	q.Body = body + "}"
	return r.Do(q)
}
