package api

import (
	"net/http"
	"strconv"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/reports"

	"github.com/gin-gonic/gin"
)

// templateStats answers a template's figures (claimed, redeemed, refunded,
// revoked, remaining...) and its claims and redemptions per hour over the
// last ?hours= hours (1..168, 24 by default).
func (s *Server) templateStats(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	hours := 24
	if v := c.Query("hours"); v != "" {
		h, err := strconv.Atoi(v)
		if err != nil || h < 1 || h > reports.MaxStatsHours {
			web.RespondError(c, models.Invalid("hours", "must be a whole number between 1 and %d", reports.MaxStatsHours))
			return
		}
		hours = h
	}
	stats, err := s.reports.TemplateStats(c.Request.Context(), id, hours)
	web.Answer(c, err, http.StatusOK, "ok", statsAnswer{Stats: valueOf(stats)})
}
