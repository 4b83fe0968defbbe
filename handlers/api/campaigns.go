package api

import (
	"net/http"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"

	"github.com/gin-gonic/gin"
)

type createCampaignRequest struct {
	Name        *string `json:"name" binding:"required" schema:"name" doc:"1-100 characters on one line, without control characters, characters that change the text direction or U+FFFD"`
	BudgetCents *int64  `json:"budget_cents" schema:"budget" doc:"0 (no budget) up to 10^12"`
	Currency    *string `json:"currency" schema:"currency" doc:"ISO 4217, of the budget and of every template of the campaign; the deployment's (COUPON_CURRENCY) when left out"`
	PerCustomer *int64  `json:"per_customer_limit" schema:"per_customer_limit" doc:"the most coupons one user holds of all the campaign's templates together (claims, shared codes, automatic offers); 0 (default): no cap"`
}

func (s *Server) createCampaign(c *gin.Context) {
	var req createCampaignRequest
	if !web.BindJSON(c, &req) {
		return
	}
	camp := models.Campaign{Name: *req.Name}
	if req.BudgetCents != nil {
		camp.BudgetCents = *req.BudgetCents
	}
	if req.Currency != nil {
		camp.Currency = *req.Currency
	}
	if req.PerCustomer != nil {
		camp.PerCustomerLimit = *req.PerCustomer
	}
	out, err := s.admin.CreateCampaign(c.Request.Context(), web.Principal(c).Name, camp)
	web.Answer(c, err, http.StatusCreated, "ok", campaignAnswer{Campaign: valueOf(out)})
}

func (s *Server) listCampaigns(c *gin.Context) {
	after, limit, ok := pageQuery(c)
	if !ok {
		return
	}
	out, err := s.core.ListCampaigns(c.Request.Context())
	page, next := pageOf(out, func(x *models.Campaign) int64 { return x.ID }, after, limit)
	web.Answer(c, err, http.StatusOK, "ok", campaignsAnswer{Campaigns: page, Next: Next{next}})
}

func (s *Server) getCampaign(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	out, err := s.core.GetCampaign(c.Request.Context(), id)
	web.Answer(c, err, http.StatusOK, "ok", campaignAnswer{Campaign: valueOf(out)})
}

type updateCampaignRequest struct {
	Name        web.Optional[string] `json:"name" schema:"name" doc:"1-100 characters on one line, without control characters, characters that change the text direction or U+FFFD"`
	Status      web.Optional[string] `json:"status" schema:"campaign_status" doc:"paused: none of the campaign's templates takes claims (not_claimable) until it is active again"`
	Currency    web.Optional[string] `json:"currency" schema:"currency" doc:"ISO 4217; changes only while the campaign has no template"`
	Budget      web.Optional[int64]  `json:"budget_cents" schema:"budget" doc:"0 (no budget) up to 10^12; never below what the campaign's coupons have taken (budget_exhausted)"`
	PerCustomer web.Optional[int64]  `json:"per_customer_limit" schema:"per_customer_limit" doc:"0 (no cap) up to 1000; a lower cap refuses further claims of users over it, and takes nothing back"`
}

// updateCampaign renames, pauses or resumes a campaign, or changes its budget.
func (s *Server) updateCampaign(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req updateCampaignRequest
	if !web.BindJSON(c, &req) {
		return
	}
	var p admin.CampaignPatch
	if err := web.FirstErr(req.Name.NotNull("name", &p.Name), req.Status.NotNull("status", &p.Status),
		req.Currency.NotNull("currency", &p.Currency), req.Budget.NotNull("budget_cents", &p.BudgetCents),
		req.PerCustomer.NotNull("per_customer_limit", &p.PerCustomerLimit)); err != nil {
		web.RespondError(c, err)
		return
	}
	out, err := s.admin.UpdateCampaign(c.Request.Context(), web.Principal(c).Name, id, p)
	web.Answer(c, err, http.StatusOK, "ok", campaignAnswer{Campaign: valueOf(out)})
}

// deleteCampaign deletes a campaign without templates
// (docs/flows.md#delete).
func (s *Server) deleteCampaign(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	err := s.admin.DeleteCampaign(c.Request.Context(), web.Principal(c).Name, id)
	web.Answer(c, err, http.StatusOK, "ok", web.NoPayload{})
}
