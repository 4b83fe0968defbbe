package pages

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"couponsvc/handlers/web"
	"couponsvc/models"

	"github.com/gin-gonic/gin"
)

// templateForm is the create form of a template, as typed.
type templateForm struct {
	CampaignID, Name, Description, Kind          string
	FaceValue, PercentOff, MaxDiscount, MinOrder string
	TotalStock, PerUserLimit                     string
	ClaimStartsAt, ClaimEndsAt                   string
	Validity, ValidDays, ValidFrom, ValidUntil   string
	RefundPolicy                                 string
	CodeMode, SharedCode                         string
	ExtendOnRefund, StartPaused                  bool
	Errors                                       formErrors
}

// templateFields maps the service's field names to the form's.
var templateFields = map[string]string{
	"campaign_id": "campaign_id", "name": "name", "description": "description", "kind": "kind",
	"face_value_cents": "face_value", "percent_off": "percent_off", "max_discount_cents": "max_discount",
	"min_order_cents": "min_order", "total_stock": "total_stock", "per_user_limit": "per_user_limit",
	"claim_starts_at": "claim_starts_at", "claim_ends_at": "claim_ends_at", "valid_days": "valid_days",
	"valid_from": "valid_from", "valid_until": "valid_until", "refund_policy": "refund_policy",
	"status": "start_paused", "code_mode": "code_mode", "shared_code": "shared_code",
}

// templateFieldMessages replace the service's messages beside the fields of
// the form: the service speaks of cents and of its field names, the form of
// amounts and of what the admin sees.
var templateFieldMessages = map[string]string{
	"campaign_id":     "Choose a campaign.",
	"name":            "Enter a name of 1 to 100 characters, on one line, of ordinary text.",
	"face_value":      "Enter the amount this coupon takes off, more than zero.",
	"percent_off":     "Enter a percentage from 1 to 99.",
	"max_discount":    "Enter the most this coupon may take off, more than zero.",
	"min_order":       "Enter the smallest order this coupon works on, or leave it empty for any order.",
	"total_stock":     "Enter how many coupons there are, from 1 to 10,000,000.",
	"per_user_limit":  "Enter how many one person may hold, from 1 to 100.",
	"valid_days":      "Enter a number of days from 1 to 3,650.",
	"claim_ends_at":   "Claims must close after they open.",
	"valid_from":      "Enter the first day the coupons are valid.",
	"valid_until":     "The coupons must stop being valid after they start.",
	"claim_starts_at": "Enter when claims open, such as 2026-03-01 09:00.",
}

// bornExpiredMessages replace the service's messages when the validity
// would end before coupons are claimed (models.ErrBornExpired).
var bornExpiredMessages = map[string]string{
	"valid_until":     "This time has passed: every coupon claimed would already be expired.",
	"claim_starts_at": "Claims must open before the coupons stop being valid.",
	"claim_ends_at":   "Claims must close by the time the coupons stop being valid, or the last ones claimed would already be expired.",
}

// templateErrors puts a service's error beside each field of a template
// form it names (through fields), in the form's words; a field that has a
// message already (the form's own check of what was typed) keeps it. It
// reports whether err was one the form can show.
func templateErrors(errs formErrors, err error, fields map[string]string) bool {
	fresh := formErrors{}
	if !fresh.fromError(err, fields) {
		return false
	}
	words := templateFieldMessages
	if errors.Is(err, models.ErrBornExpired) {
		words = bornExpiredMessages
	}
	for field, msg := range fresh {
		if w, ok := words[field]; ok {
			msg = w
		}
		errs.add(field, msg)
	}
	return true
}

// newTemplatePage is the data of template_new.html.
type newTemplatePage struct {
	basePage
	Form      templateForm
	Campaigns []models.Campaign
}

// showNewTemplate shows an empty create form with sensible defaults.
func (p *Pages) showNewTemplate(c *gin.Context) {
	f := templateForm{Kind: models.KindFixed, TotalStock: "100", PerUserLimit: "1", Validity: "days", ValidDays: "30",
		RefundPolicy: models.RefundRestore, CampaignID: c.Query("campaign"), Errors: formErrors{}}
	p.renderNewTemplate(c, http.StatusOK, f)
}

func (p *Pages) renderNewTemplate(c *gin.Context, status int, f templateForm) {
	camps, err := p.core.ListCampaigns(c.Request.Context())
	if err != nil {
		p.fail(c, err)
		return
	}
	if len(camps) == 0 {
		p.flash(c, false, "Create a campaign first: every template belongs to one.")
		redirect(c, "/admin/campaigns/new")
		return
	}
	p.render(c, status, "template_new", &newTemplatePage{basePage: basePage{Title: "New template", Nav: "admin"},
		Form: f, Campaigns: camps})
}

// createTemplate creates a template from the form; on a mistake the form comes
// back as typed with the error beside the field.
func (p *Pages) createTemplate(c *gin.Context) {
	f := templateForm{
		CampaignID: c.PostForm("campaign_id"), Name: c.PostForm("name"), Description: c.PostForm("description"),
		Kind: c.PostForm("kind"), FaceValue: c.PostForm("face_value"), PercentOff: c.PostForm("percent_off"),
		MaxDiscount: c.PostForm("max_discount"), MinOrder: c.PostForm("min_order"),
		TotalStock: c.PostForm("total_stock"), PerUserLimit: c.PostForm("per_user_limit"),
		ClaimStartsAt: c.PostForm("claim_starts_at"), ClaimEndsAt: c.PostForm("claim_ends_at"),
		Validity: c.PostForm("validity"), ValidDays: c.PostForm("valid_days"), ValidFrom: c.PostForm("valid_from"),
		ValidUntil: c.PostForm("valid_until"), RefundPolicy: c.PostForm("refund_policy"),
		CodeMode: c.PostForm("code_mode"), SharedCode: strings.TrimSpace(c.PostForm("shared_code")),
		ExtendOnRefund: c.PostForm("extend_on_refund") != "", StartPaused: c.PostForm("start_paused") != "",
		Errors: formErrors{},
	}
	handleForm(p, c, formPost[models.Template]{errs: f.Errors,
		read: func() models.Template { return f.template(p) },
		// What was typed cannot be sent: check the rest as the service
		// would, so that every mistake is named in this one answer.
		recheck: func(t models.Template) error { return t.Validate() },
		act: func(t models.Template) (outcome, error) {
			out, err := p.admin.CreateTemplate(c.Request.Context(), web.Principal(c).Name, t)
			if err != nil {
				return outcome{}, err
			}
			return done(fmt.Sprintf("Created “%s”.", out.Name), fmt.Sprintf("/admin/templates/%d", out.ID)), nil
		},
		refused: func(_ models.Template, err error) bool { return templateErrors(f.Errors, err, templateFields) },
		show:    func(status int) { p.renderNewTemplate(c, status, f) },
	})
}

// template converts the form; fields that do not apply to the chosen kind or
// validity are left out, so that a value typed before switching does not
// count. Times are read in the deployment's zone (p.formTime).
func (f *templateForm) template(p *Pages) models.Template {
	e := f.Errors
	t := models.Template{Name: f.Name, Description: strings.TrimSpace(f.Description), Kind: f.Kind,
		RefundPolicy: f.RefundPolicy, ExtendOnRefund: f.ExtendOnRefund, Status: models.TemplateActive,
		CodeMode: f.CodeMode}
	if f.CodeMode == models.CodeModeShared {
		t.SharedCode = f.SharedCode
	}
	t.CampaignID = formInt(e, "campaign_id", f.CampaignID, false)
	if t.CampaignID <= 0 {
		e.add("campaign_id", "Choose a campaign.")
	}
	switch f.Kind {
	case models.KindFixed:
		t.FaceValueCents = formMoney(e, "face_value", f.FaceValue, true)
	case models.KindPercent:
		t.PercentOff = formInt(e, "percent_off", f.PercentOff, true)
		t.MaxDiscountCents = formMoney(e, "max_discount", f.MaxDiscount, true)
	default:
		e.add("kind", "Choose an amount off or a percentage off.")
	}
	t.MinOrderCents = formMoney(e, "min_order", f.MinOrder, false)
	t.TotalStock = formInt(e, "total_stock", f.TotalStock, true)
	t.PerUserLimit = formInt(e, "per_user_limit", f.PerUserLimit, true)
	if starts := p.formTime(e, "claim_starts_at", f.ClaimStartsAt); starts != nil {
		t.ClaimStartsAt = *starts
	}
	t.ClaimEndsAt = p.formTime(e, "claim_ends_at", f.ClaimEndsAt)
	if f.Validity == "dates" {
		t.ValidFrom = p.formTime(e, "valid_from", f.ValidFrom)
		t.ValidUntil = p.formTime(e, "valid_until", f.ValidUntil)
		if f.ValidFrom == "" {
			e.add("valid_from", "Enter the first day the coupons are valid.")
		}
		if f.ValidUntil == "" {
			e.add("valid_until", "Enter when the coupons stop being valid.")
		}
	} else {
		t.ValidDays = formInt(e, "valid_days", f.ValidDays, true)
	}
	if f.StartPaused {
		t.Status = models.TemplatePaused
	}
	if t.ClaimStartsAt.IsZero() && t.ClaimEndsAt != nil && !t.ClaimEndsAt.After(time.Now()) {
		e.add("claim_ends_at", "This must be in the future.")
	}
	return t
}
