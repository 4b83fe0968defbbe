package api

import (
	"net/http"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/reconcile"

	"github.com/gin-gonic/gin"
)

type reconcileRequest struct {
	TemplateID *int64 `json:"template_id" schema:"id" doc:"one template (all when left out)"`
	Repair     *bool  `json:"repair" binding:"required" doc:"rebuild the counters that drifted"`
}

// reconcileCounters compares Redis with the database for every template (or
// one) and the budget of their campaigns and, with repair, rebuilds the
// counters that drifted (see docs/flows.md).
func (s *Server) reconcileCounters(c *gin.Context) {
	var req reconcileRequest
	if !web.BindJSON(c, &req) {
		return
	}
	var tid int64
	if req.TemplateID != nil {
		if *req.TemplateID <= 0 {
			web.RespondError(c, models.Invalid("template_id", "must be a positive id"))
			return
		}
		tid = *req.TemplateID
	}
	report, err := s.reconciler.Reconcile(c.Request.Context(), reconcile.ReconcileRequest{
		TemplateID: tid, Repair: *req.Repair, Actor: web.Principal(c).Name,
	})
	if err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, http.StatusOK, "ok", reconcileAnswer{ReconcileReport: *report})
}
