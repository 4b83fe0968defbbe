package api

import (
	"net/http"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/services/admin"

	"github.com/gin-gonic/gin"
)

type createTokenRequest struct {
	Role *string `json:"role" binding:"required" schema:"token_role"`
	Name *string `json:"name" binding:"required" schema:"name" doc:"1-100 characters on one line (394 bytes at most in UTF-8), without control characters, characters that change the text direction or U+FFFD"`
}

// createToken makes an API token; the token is in this answer only.
func (s *Server) createToken(c *gin.Context) {
	var req createTokenRequest
	if !web.BindJSON(c, &req) {
		return
	}
	token, rec, err := s.admin.CreateToken(c.Request.Context(), web.Principal(c).Name, *req.Role, *req.Name)
	if err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, http.StatusCreated, "ok", tokenCreatedAnswer{Token: token, TokenInfo: *rec})
}

// listTokens lists the API tokens, revoked ones included, without their
// secrets.
func (s *Server) listTokens(c *gin.Context) {
	after, limit, ok := pageQuery(c)
	if !ok {
		return
	}
	tokens, err := s.admin.ListTokens(c.Request.Context())
	page, next := newestPageOf(tokens, func(x *admin.TokenView) int64 { return x.ID }, after, limit)
	web.Answer(c, err, http.StatusOK, "ok", tokensAnswer{Tokens: page, Next: Next{next}})
}

// revokeToken stops a token from working: 200 "ok"; a token already revoked
// → 200 "duplicate".
func (s *Server) revokeToken(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	tok, duplicate, err := s.admin.RevokeToken(c.Request.Context(), web.Principal(c).Name, id)
	if err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, http.StatusOK, web.Replayed(duplicate, "ok"), tokenAnswer{Token: *tok})
}
