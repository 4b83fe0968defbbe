package pages

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/gin-gonic/gin"
)

// keptParam is the query parameter of a form page naming the input kept
// for it across a login (docs/pages.md, "Session ended").
const keptParam = "kept"

// keepPosted keeps the input of a form posted after its session ended, and
// returns the address of the form's page (its Referer, when on this site)
// naming it, for the login to go back to; "" when there is nothing to keep.
// Passwords, secrets and tokens are never kept: the CSRF token in particular
// is the new session's when the form is sent again.
func (p *Pages) keepPosted(c *gin.Context) (string, error) {
	if p.core == nil || !strings.HasPrefix(c.ContentType(), "application/x-www-form-urlencoded") {
		return "", nil
	}
	ref, err := url.Parse(c.Request.Referer())
	if err != nil || ref.Host != c.Request.Host {
		return "", nil
	}
	q := ref.Query()
	q.Del(keptParam)
	page := safeNext((&url.URL{Path: ref.Path, RawQuery: q.Encode()}).String())
	if page == "" || c.Request.ParseForm() != nil {
		return "", nil
	}
	fields := map[string][]string{}
	for name, values := range c.Request.PostForm {
		lower := strings.ToLower(name)
		if strings.Contains(lower, "password") || strings.Contains(lower, "secret") || strings.Contains(lower, "token") {
			continue
		}
		fields[name] = values
	}
	id, err := p.core.KeepForm(c.Request.Context(), core.KeptForm{Action: c.Request.URL.Path, Fields: fields})
	if err != nil {
		return "", err
	}
	sep := "?"
	if strings.Contains(page, "?") {
		sep = "&"
	}
	return page + sep + keptParam + "=" + url.QueryEscape(id), nil
}

// keptForm takes the input kept for this page, once, for its script to
// fill the form with (templates/layout.html).
func (p *Pages) keptForm(c *gin.Context) (*core.KeptForm, error) {
	id := c.Query(keptParam)
	if id == "" || c.Request.Method != http.MethodGet || web.Principal(c) == nil || p.core == nil {
		return nil, nil
	}
	return p.core.TakeForm(c.Request.Context(), id)
}
