package pages

import (
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
)

// flashSecret is the session's flash key of a secret just made (an API
// token's, a webhook's signing secret), kept for the one page that shows it.
const flashSecret = "_secret"

// keepSecret keeps the secret of the thing of kind and id for the next page
// this browser shows, in the session cookie (signed and encrypted, never
// stored on the server): a create form answers with a redirect to the
// list (POST-redirect-GET), which shows the secret once; a reload of that
// page, or the same form sent again, shows it no more (docs/pages.md,
// "Forms that forgive").
func (p *Pages) keepSecret(c *gin.Context, kind string, id int64, secret string) {
	sess := p.session(c)
	sess.AddFlash(kind+" "+strconv.FormatInt(id, 10)+" "+secret, flashSecret)
	p.saveSession(c, sess)
}

// takeSecret takes the secret kept for the thing of kind and id, once: ""
// when none is kept (it was shown already). Secrets kept for other things
// are dropped with it: a secret is shown on the page its create went to or
// not at all.
func (p *Pages) takeSecret(c *gin.Context, kind string, id int64) string {
	sess := p.session(c)
	kept := sess.Flashes(flashSecret)
	if len(kept) == 0 {
		return ""
	}
	p.saveSession(c, sess)
	prefix := kind + " " + strconv.FormatInt(id, 10) + " "
	for _, f := range kept {
		if s, ok := f.(string); ok && strings.HasPrefix(s, prefix) {
			return strings.TrimPrefix(s, prefix)
		}
	}
	return ""
}

// madeID reads the "made" query parameter of a list a create form went
// to: the id of what it made, or 0.
func madeID(c *gin.Context) int64 {
	id, err := strconv.ParseInt(c.Query("made"), 10, 64)
	if err != nil || id < 1 {
		return 0
	}
	return id
}
