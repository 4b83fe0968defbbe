package pages

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/gin-gonic/gin"
)

// formTokenField is the hidden field of a create form that names one
// filling of it: the form's Idempotency-Key (docs/idempotency.md). A form
// sent twice (a double click, a reload of the answer, a retry after a
// dropped connection) creates one thing.
const formTokenField = "form_token"

// formTokenLen is the length of a form token, in hex digits.
const formTokenLen = 32

// newFormToken is a fresh token for a create form shown empty.
func newFormToken() string {
	b := make([]byte, formTokenLen/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// flashAlreadyCreated is the session's flash key of the address of what a
// create form sent twice made the first time: the next page says "Already
// created" with a link to it (templates/layout.html).
const flashAlreadyCreated = "_created"

// postedOrNewToken is the token of a create form shown again after a
// mistake: the one it was sent with (so that the corrected form is still
// one filling), or a fresh one when it came without.
func postedOrNewToken(c *gin.Context) string {
	if tok := formToken(c); tok != "" {
		return tok
	}
	return newFormToken()
}

// formToken reads a posted form's token: "" when it has none or a malformed
// one (such a post is not made safe to send twice).
func formToken(c *gin.Context) string {
	tok := c.PostForm(formTokenField)
	if len(tok) != formTokenLen {
		return ""
	}
	if _, err := hex.DecodeString(tok); err != nil {
		return ""
	}
	return tok
}

// OnceStore keeps what a form post with a token did (core.Core does, in
// Redis, with the API's Idempotency-Key answers).
type OnceStore interface {
	BeginIdempotent(ctx context.Context, scope, hash string) (*core.IdempotentAnswer, bool, error)
	FinishIdempotent(ctx context.Context, scope string, a core.IdempotentAnswer) error
	AbortIdempotent(ctx context.Context, scope string) error
}

// onceWait is how long a second post of a form waits for the first to
// finish before it says the form is still being sent.
const onceWait = 5 * time.Second

// createOnce runs create for the first post of a form token; a post of the
// same token by the same user afterwards goes where the first one went,
// saying that it was done already. A refusal or a fault forgets the token,
// so that the corrected form (which keeps it) is sent again. Without a
// token create simply runs.
func (p *Pages) createOnce(c *gin.Context, token string, create func() (outcome, error)) (outcome, error) {
	if token == "" {
		return create()
	}
	ctx := c.Request.Context()
	who := "anonymous"
	if pr := web.Principal(c); pr != nil {
		who = pr.Role + "\x00" + pr.Name
	}
	hash := c.Request.URL.Path
	sum := sha256.Sum256([]byte("page\x00" + who + "\x00" + hash + "\x00" + token))
	scope := hex.EncodeToString(sum[:])
	prev, began, err := p.once.BeginIdempotent(ctx, scope, hash)
	for deadline := time.Now().Add(onceWait); err == nil && !began && !prev.Done && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		prev, began, err = p.once.BeginIdempotent(ctx, scope, hash)
	}
	switch {
	case err != nil:
		return outcome{}, err
	case !began && prev.Done:
		sess := p.session(c)
		sess.AddFlash(string(prev.Body), flashAlreadyCreated)
		p.saveSession(c, sess)
		return outcome{to: string(prev.Body)}, nil
	case !began:
		return outcome{failed: "This form is still being sent: look for what it made before sending it again.", to: "/admin"}, nil
	}
	out, err := create()
	if err != nil || out.to == "" {
		_ = p.once.AbortIdempotent(context.WithoutCancel(ctx), scope)
		return out, err
	}
	if err := p.once.FinishIdempotent(context.WithoutCancel(ctx), scope,
		core.IdempotentAnswer{Hash: hash, Status: http.StatusSeeOther, Body: []byte(out.to)}); err != nil {
		p.log.Warn("a form token's answer was not kept", "err", err)
	}
	return out, nil
}

// handleCreateOnTemplate handles a form posted on a template, its id in the
// address, that makes something (stock, a job): post is the form's post but
// for its act, which is given the template's id and runs once per form
// token (createOnce). An address without a valid id answers the not-found
// page.
func handleCreateOnTemplate[T any](p *Pages, c *gin.Context, post formPost[T], act func(id int64, in T) (outcome, error)) {
	id, ok := p.pathID(c, "template")
	if !ok {
		return
	}
	post.act = func(in T) (outcome, error) {
		return p.createOnce(c, formToken(c), func() (outcome, error) { return act(id, in) })
	}
	handleForm(p, c, post)
}
