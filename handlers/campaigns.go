package handlers

import (
	"encoding/json"
	"net/http"

	"couponsvc/models"
	"couponsvc/services"

	"github.com/gin-gonic/gin"
)

type createCampaignRequest struct {
	Name        *string `json:"name"`
	BudgetCents *int64  `json:"budget_cents"`
}

func (s *Server) createCampaign(c *gin.Context) {
	var req createCampaignRequest
	if !bindJSON(c, &req) {
		return
	}
	if err := required("name", req.Name); err != nil {
		respondError(c, err)
		return
	}
	camp := models.Campaign{Name: *req.Name}
	if req.BudgetCents != nil {
		camp.BudgetCents = *req.BudgetCents
	}
	out, err := s.svc.CreateCampaign(c.Request.Context(), principal(c).Name, camp)
	if err != nil {
		respondError(c, err)
		return
	}
	respond(c, http.StatusCreated, "ok", gin.H{"campaign": out})
}

func (s *Server) listCampaigns(c *gin.Context) {
	out, err := s.svc.ListCampaigns(c.Request.Context())
	if err != nil {
		respondError(c, err)
		return
	}
	respond(c, http.StatusOK, "ok", gin.H{"campaigns": out})
}

func (s *Server) getCampaign(c *gin.Context) {
	id, ok := pathID(c, "id")
	if !ok {
		return
	}
	out, err := s.svc.GetCampaign(c.Request.Context(), id)
	if err != nil {
		respondError(c, err)
		return
	}
	respond(c, http.StatusOK, "ok", gin.H{"campaign": out})
}

// createTemplateRequest mirrors models.Template's settable fields; pointers
// tell a missing field from a zero one, and times are parsed here so that a
// malformed one is named.
type createTemplateRequest struct {
	CampaignID       *int64  `json:"campaign_id"`
	Name             *string `json:"name"`
	Description      *string `json:"description"`
	Kind             *string `json:"kind"`
	FaceValueCents   *int64  `json:"face_value_cents"`
	PercentOff       *int64  `json:"percent_off"`
	MaxDiscountCents *int64  `json:"max_discount_cents"`
	MinOrderCents    *int64  `json:"min_order_cents"`
	TotalStock       *int64  `json:"total_stock"`
	PerUserLimit     *int64  `json:"per_user_limit"`
	ClaimStartsAt    *string `json:"claim_starts_at"`
	ClaimEndsAt      *string `json:"claim_ends_at"`
	ValidFrom        *string `json:"valid_from"`
	ValidUntil       *string `json:"valid_until"`
	ValidDays        *int64  `json:"valid_days"`
	RefundPolicy     *string `json:"refund_policy"`
	ExtendOnRefund   *bool   `json:"extend_on_refund"`
	Status           *string `json:"status"`
}

// template converts the request, naming the first missing or malformed field.
func (r *createTemplateRequest) template() (models.Template, error) {
	var t models.Template
	if err := firstErr(required("campaign_id", r.CampaignID), required("name", r.Name),
		required("kind", r.Kind), required("total_stock", r.TotalStock),
		required("per_user_limit", r.PerUserLimit)); err != nil {
		return t, err
	}
	t.CampaignID, t.Name, t.Kind = *r.CampaignID, *r.Name, *r.Kind
	t.TotalStock, t.PerUserLimit = *r.TotalStock, *r.PerUserLimit
	set := func(dst *int64, v *int64) {
		if v != nil {
			*dst = *v
		}
	}
	set(&t.FaceValueCents, r.FaceValueCents)
	set(&t.PercentOff, r.PercentOff)
	set(&t.MaxDiscountCents, r.MaxDiscountCents)
	set(&t.MinOrderCents, r.MinOrderCents)
	set(&t.ValidDays, r.ValidDays)
	if r.Description != nil {
		t.Description = *r.Description
	}
	if r.RefundPolicy != nil {
		t.RefundPolicy = *r.RefundPolicy
	}
	if r.ExtendOnRefund != nil {
		t.ExtendOnRefund = *r.ExtendOnRefund
	}
	if r.Status != nil {
		t.Status = *r.Status
	}
	starts, err := parseTime("claim_starts_at", r.ClaimStartsAt)
	if err != nil {
		return t, err
	}
	if starts != nil {
		t.ClaimStartsAt = *starts
	}
	if t.ClaimEndsAt, err = parseTime("claim_ends_at", r.ClaimEndsAt); err != nil {
		return t, err
	}
	if t.ValidFrom, err = parseTime("valid_from", r.ValidFrom); err != nil {
		return t, err
	}
	if t.ValidUntil, err = parseTime("valid_until", r.ValidUntil); err != nil {
		return t, err
	}
	return t, nil
}

func (s *Server) createTemplate(c *gin.Context) {
	var req createTemplateRequest
	if !bindJSON(c, &req) {
		return
	}
	t, err := req.template()
	if err != nil {
		respondError(c, err)
		return
	}
	out, err := s.svc.CreateTemplate(c.Request.Context(), principal(c).Name, t)
	if err != nil {
		respondError(c, err)
		return
	}
	respond(c, http.StatusCreated, "ok", gin.H{"template": out})
}

// listTemplates lists the templates on offer (active, claim window open,
// coupons still valid); an admin may ask for all with ?all=1.
func (s *Server) listTemplates(c *gin.Context) {
	all := c.Query("all") == "1"
	if all {
		// No credentials is 401 and the wrong role 403, as requireRole answers.
		switch p := principal(c); {
		case p == nil:
			respondError(c, &models.Error{Code: models.CodeUnauthorized, Message: "only admins see paused templates: log in or send an API token"})
			return
		case p.Role != models.RoleAdmin:
			respondError(c, &models.Error{Code: models.CodeUnauthorized, Forbidden: true, Message: "only admins see paused templates"})
			return
		}
	}
	out, err := s.svc.ListTemplates(c.Request.Context(), !all)
	if err != nil {
		respondError(c, err)
		return
	}
	if out == nil {
		out = []services.TemplateView{}
	}
	respond(c, http.StatusOK, "ok", gin.H{"templates": out})
}

func (s *Server) getTemplate(c *gin.Context) {
	id, ok := pathID(c, "id")
	if !ok {
		return
	}
	// Others than admins see only what the list shows them: a template not
	// on offer yet is not found, as an id that does not exist.
	view := s.svc.ViewOffer
	if p := principal(c); p != nil && p.Role == models.RoleAdmin {
		view = s.svc.ViewTemplate
	}
	out, err := view(c.Request.Context(), id)
	if err != nil {
		respondError(c, err)
		return
	}
	respond(c, http.StatusOK, "ok", gin.H{"template": out.Template, "remaining": out.Remaining})
}

// updateTemplateRequest holds what PATCH may change. claim_ends_at is raw so
// that an explicit null (remove the end) differs from a missing field.
type updateTemplateRequest struct {
	Name          *string          `json:"name"`
	Description   *string          `json:"description"`
	ClaimStartsAt *string          `json:"claim_starts_at"`
	ClaimEndsAt   *json.RawMessage `json:"claim_ends_at"`
	Status        *string          `json:"status"`
}

func (s *Server) updateTemplate(c *gin.Context) {
	id, ok := pathID(c, "id")
	if !ok {
		return
	}
	var req updateTemplateRequest
	if !bindJSON(c, &req) {
		return
	}
	p := services.TemplatePatch{Name: req.Name, Description: req.Description, Status: req.Status}
	var err error
	if p.ClaimStartsAt, err = parseTime("claim_starts_at", req.ClaimStartsAt); err != nil {
		respondError(c, err)
		return
	}
	if req.ClaimEndsAt != nil {
		if string(*req.ClaimEndsAt) == "null" {
			p.ClearClaimEndsAt = true
		} else {
			var s string
			if json.Unmarshal(*req.ClaimEndsAt, &s) != nil {
				respondError(c, models.Invalid("claim_ends_at", "must be an RFC 3339 time or null"))
				return
			}
			if p.ClaimEndsAt, err = parseTime("claim_ends_at", &s); err != nil {
				respondError(c, err)
				return
			}
		}
	}
	out, err := s.svc.UpdateTemplate(c.Request.Context(), principal(c).Name, id, p)
	if err != nil {
		respondError(c, err)
		return
	}
	respond(c, http.StatusOK, "ok", gin.H{"template": out})
}

type addStockRequest struct {
	Delta  *int64  `json:"delta"`
	Reason *string `json:"reason"`
}

func (s *Server) addStock(c *gin.Context) {
	id, ok := pathID(c, "id")
	if !ok {
		return
	}
	var req addStockRequest
	if !bindJSON(c, &req) {
		return
	}
	if err := firstErr(required("delta", req.Delta), required("reason", req.Reason)); err != nil {
		respondError(c, err)
		return
	}
	out, err := s.svc.AddStock(c.Request.Context(), principal(c).Name, id, *req.Delta, *req.Reason)
	if err != nil {
		respondError(c, err)
		return
	}
	respond(c, http.StatusOK, "ok", gin.H{"template": out})
}
