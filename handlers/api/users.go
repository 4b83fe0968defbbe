package api

import (
	"net/http"

	"couponsvc/handlers/web"

	"github.com/gin-gonic/gin"
)

type createUserRequest struct {
	Username *string `json:"username" binding:"required" schema:"user_id"`
	Password *string `json:"password" binding:"required" doc:"the password"`
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
