package api

import (
	"net/http"

	"github.com/couponsvc/couponsvc/handlers/web"

	"github.com/gin-gonic/gin"
)

type createUserRequest struct {
	Username *string `json:"username" binding:"required" schema:"user_id" doc:"the user's name, a user id (a shopper's is their user_id); a name taken is refused 400"`
	Password *string `json:"password" binding:"required" schema:"password" doc:"the password: 8 to 72 bytes in UTF-8 (bcrypt reads no more than 72 bytes, so the bound counts bytes, which maxLength cannot: 72 ASCII characters fit, 18 of four bytes each)"`
	Role     *string `json:"role" binding:"required" schema:"user_role"`
}

func (s *Server) createUser(c *gin.Context) {
	var req createUserRequest
	if !web.BindJSON(c, &req) {
		return
	}
	u, err := s.admin.CreateUser(c.Request.Context(), web.Principal(c).Name, *req.Username, *req.Password, *req.Role)
	web.Answer(c, err, http.StatusCreated, "ok", userAnswer{User: valueOf(u)})
}
