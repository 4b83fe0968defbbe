package web

import (
	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// PrincipalKey is the gin context key of the request's *models.Principal:
// the API's authentication and the pages' session both set it.
const PrincipalKey = "couponsvc.principal"

// Principal returns who makes the request, or nil for an anonymous one.
func Principal(c *gin.Context) *models.Principal {
	if v, ok := c.Get(PrincipalKey); ok {
		return v.(*models.Principal)
	}
	return nil
}
