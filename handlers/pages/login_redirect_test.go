package pages_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/services"

	"github.com/chromedp/chromedp"
)

// nextCase is a "next" value as the login form receives it (already decoded
// once from the query or the form) and where the login must send the browser:
// the default page of the user ("") or an exact path on this site.
type nextCase struct {
	name, next, want string
}

// hostileNexts are "next" values that would take a browser to another host,
// or could, if passed on as they are; a few odd but harmless ones are kept,
// rebuilt, on this site.
var hostileNexts = []nextCase{
	{"TabThenSlash", "/\t/evil.example", ""},
	{"NewlineThenSlash", "/\n/evil.example", ""},
	{"CRThenSlash", "/\r/evil.example", ""},
	{"CRLFHeader", "/x\r\nLocation: //evil.example", ""},
	{"NULThenSlash", "/\x00/evil.example", ""},
	{"VerticalTab", "/\x0b/evil.example", ""},
	{"DEL", "/\x7f/evil.example", ""},
	{"EncodedTab", "/%09/evil.example", ""},
	{"EncodedNewline", "/%0a/evil.example", ""},
	{"EncodedCRLF", "/%0d%0a/evil.example", ""},
	{"EncodedNUL", "/%00/evil.example", ""},
	{"EncodedSlashes", "/%2f%2fevil.example", ""},
	{"EncodedSlashUpper", "/%2F/evil.example", ""},
	{"EncodedSlashesNoLead", "%2f%2fevil.example", ""},
	{"SlashBackslash", "/\\evil.example", ""},
	{"SlashBackslashSlash", "/\\/evil.example", ""},
	{"TwoBackslashes", "\\\\evil.example", ""},
	{"EncodedBackslash", "/%5cevil.example", ""},
	{"EncodedBackslashes", "/%5C%5Cevil.example", ""},
	{"BackslashInQuery", "/admin?x=\\evil", ""},
	{"EncodedBackslashInQuery", "/admin?x=%5c", ""},
	{"JavaScript", "javascript:alert(1)", ""},
	{"JavaScriptMixedCase", "JaVaScRiPt:alert(1)", ""},
	{"Data", "data:text/html,<script>alert(1)</script>", ""},
	{"HTTPS", "https://evil.example", ""},
	{"SchemeNoSlashes", "http:evil.example", ""},
	{"SchemeBackslash", "https:/\\evil.example", ""},
	{"ProtocolRelative", "//evil.example", ""},
	{"ThreeSlashes", "///evil.example", ""},
	{"SpacePrefixed", " //evil.example", ""},
	{"TabPrefixed", "\t//evil.example", ""},
	{"NULPrefixed", "\x00//evil.example", ""},
	{"TrailingTab", "/admin/audit\t", ""},
	{"DotSegment", "/./evil.example", ""},
	{"DotDotSlashes", "/..//evil.example", ""},
	{"EncodedDotDotSlashes", "/%2e%2e//evil.example", ""},
	{"IdeographicSpace", "/\u3000/evil.example", ""},
	{"EncodedIdeographicSpace", "/%E3%80%80/evil.example", ""},
	{"ZeroWidthSpace", "/\u200b/evil.example", ""},
	{"BidiOverride", "/\u202e/elpmaxe.live", ""},
	{"NoBreakSpace", "/\u00a0/evil.example", ""},
	{"InvalidUTF8", "/\xff/evil.example", ""},
	{"Login", "/login?next=//evil.example", ""},
	{"Logout", "/logout", ""},
	{"TooLong", "/admin/audit?x=" + strings.Repeat("a", 500), ""},
	// Odd but on this site: kept, rebuilt.
	{"FullwidthSolidus", "/\uff0f\uff0fevil.example", "/%EF%BC%8F%EF%BC%8Fevil.example"},
	{"AtSign", "/@evil.example", "/@evil.example"},
	{"QueryWithSlashes", "/admin/audit?next=//evil.example", "/admin/audit?next=//evil.example"},
	{"Fragment", "/admin/audit#//evil.example", "/admin/audit"},
	{"Plain", "/admin/audit", "/admin/audit"},
}

var nextInput = regexp.MustCompile(`<input type="hidden" name="next" value="([^"]*)">`)

// loginRedirectEnv serves the pages with login limits high enough for the
// many logins of these tests from one address.
func loginRedirectEnv(t *testing.T) *testsupport.PageEnv {
	return testsupport.NewPageEnvWith(t, services.Config{AdminConfig: services.AdminConfig{LoginsPerAccount: 1000, LoginsPerAddress: 1000}})
}

// TestLoginNextStaysOnSite checks the server's answers: the login form
// carries only a safe next, and the redirect after logging in (and for a user
// already logged in) is exactly the kept path or the default page.
func TestLoginNextStaysOnSite(t *testing.T) {
	e := loginRedirectEnv(t)
	for _, tc := range hostileNexts {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == "" {
				want = "/admin" // the admin's home page
			}
			c := e.Client(t)
			form := c.Get("/login?next=" + url.QueryEscape(tc.next))
			if form.Status != http.StatusOK {
				t.Fatalf("GET /login: %v", form)
			}
			hidden := ""
			if m := nextInput.FindStringSubmatch(form.Body); m != nil {
				hidden = html.UnescapeString(m[1])
			}
			if hidden != tc.want {
				t.Fatalf("the form carries next %q, want %q", hidden, tc.want)
			}
			token := c.CSRF("/login")
			p := c.Post("/login", url.Values{"csrf_token": {token}, "username": {"admin"},
				"password": {e.Passwords["admin"]}, "next": {tc.next}})
			if p.Status != http.StatusSeeOther || p.Location() != want {
				t.Fatalf("login with next %q: %d to %q, want 303 to %q", tc.next, p.Status, p.Location(), want)
			}
			// Logged in already: the login page sends the user on at once.
			p = c.Get("/login?next=" + url.QueryEscape(tc.next))
			if p.Status != http.StatusSeeOther || p.Location() != want {
				t.Fatalf("logged in, GET /login?next=%q: %d to %q, want 303 to %q", tc.next, p.Status, p.Location(), want)
			}
		})
	}
}

// TestBrowserLoginNextStaysOnSite logs in through the real form in Chromium
// with each hostile next (both in the page's address and put into the form's
// hidden field, so that the server's answer to the POST is what is tried) and
// checks that the browser ends on this site, on the expected page.
func TestBrowserLoginNextStaysOnSite(t *testing.T) {
	e := loginRedirectEnv(t)
	b := startBrowser(t, e.Srv.URL)
	base, _ := url.Parse(e.Srv.URL)
	for _, tc := range hostileNexts {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == "" {
				want = "/admin"
			}
			tb := b.tab("admin " + tc.name)
			tb.open("/login?next=" + url.QueryEscape(tc.next))
			// JavaScript strings hold only valid UTF-16: invalid UTF-8 is
			// tried through the address alone.
			if js, _ := json.Marshal(tc.next); utf8.ValidString(tc.next) {
				eval[bool](tb, fmt.Sprintf(`(function(){
					var f = document.querySelector('form[action="/login"]');
					var i = f.querySelector('input[name="next"]');
					if (!i) { i = document.createElement("input"); i.type = "hidden"; i.name = "next"; f.appendChild(i); }
					i.value = %s;
					return true;
				})()`, js))
			}
			tb.login("admin", e.Passwords["admin"])
			wantOnSite(t, tb, base.Host, want, "after logging in")

			// Logged in: the login page with the same next sends the browser on.
			ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
			defer cancel()
			if err := chromedp.Do(ctx, chromedp.Navigate(e.Srv.URL+"/login?next="+url.QueryEscape(tc.next)),
				chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
				t.Fatalf("open /login logged in: %v", err)
			}
			wantOnSite(t, tb, base.Host, want, "logged in, at /login")
		})
	}
}

// wantOnSite checks that the tab shows a page of this site (host) at the
// path and query want.
func wantOnSite(t *testing.T, tb *tab, host, want, when string) {
	t.Helper()
	got := eval[string](tb, `location.href`)
	u, err := url.Parse(got)
	if err != nil || u.Scheme != "http" || u.Host != host {
		t.Fatalf("%s the browser is at %q, want this site (%s)", when, got, host)
	}
	if at := u.RequestURI(); at != want {
		t.Fatalf("%s the browser is at %q, want %q", when, at, want)
	}
}
