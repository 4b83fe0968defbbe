package api

import (
	"slices"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// authenticate finds who makes the request: a bearer token, or else the
// session of a logged-in user (when the pages are wired in). A bad token is
// refused at once; no credentials at all leaves the request anonymous, for
// requireRole to decide. Failed token look-ups are counted per client
// address: over the limit, the address's bearer requests are answered 429.
func (s *Server) authenticate(c *gin.Context) {
	if h := c.GetHeader("Authorization"); h != "" {
		token, ok := strings.CutPrefix(h, "Bearer ")
		if !ok {
			web.RespondError(c, &models.Error{Code: models.CodeUnauthorized, Message: `the Authorization header must be "Bearer <token>"`})
			return
		}
		if s.badTokens != nil {
			if err := s.badTokens.Blocked(c.ClientIP()); err != nil {
				s.core.Metrics().Refused.WithLabelValues("rate_limited_token").Inc()
				web.RespondError(c, err)
				return
			}
		}
		p, err := s.admin.AuthenticateToken(c.Request.Context(), strings.TrimSpace(token))
		if err != nil {
			if s.badTokens != nil && models.IsCode(err, models.CodeUnauthorized) {
				if lerr := s.badTokens.Failed(c.Request.Context(), c.ClientIP()); lerr != nil {
					if models.IsCode(lerr, models.CodeRateLimited) {
						s.core.Metrics().Refused.WithLabelValues("rate_limited_token").Inc()
					}
					err = lerr
				}
			}
			web.RespondError(c, err)
			return
		}
		c.Set(web.PrincipalKey, p)
		return
	}
	if s.sessionPrincipal != nil {
		if p := s.sessionPrincipal(c); p != nil {
			c.Set(web.PrincipalKey, p)
		}
	}
}

// requireRole lets through only the given roles: 401 without credentials,
// 403 with the wrong role.
func requireRole(roles ...string) gin.HandlerFunc {
	return func(c *gin.Context) {
		p := web.Principal(c)
		if p == nil {
			web.RespondError(c, &models.Error{Code: models.CodeUnauthorized, Message: "log in or send an API token"})
			return
		}
		if !slices.Contains(roles, p.Role) {
			web.RespondError(c, &models.Error{Code: models.CodeUnauthorized, Forbidden: true,
				Message: "this needs the role " + strings.Join(roles, " or ")})
			return
		}
		c.Next()
	}
}
