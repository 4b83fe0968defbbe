package pages

import (
	"fmt"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"

	"github.com/gin-gonic/gin"
)

// editFields are the fields of the edit form; an error on another (such as
// valid_until, which it cannot change) is shown above the form.
var editFields = map[string]string{"name": "name", "description": "description",
	"claim_starts_at": "claim_starts_at", "claim_ends_at": "claim_ends_at",
	"code_mode": "code_mode", "shared_code": "shared_code", "stacking": "stacking", "eligibility": "eligibility"}

// saveTemplate saves the name, description, claim window, code mode,
// stacking and eligibility rule of a template (an archived one keeps its claim window and code: the form of
// an archived template sends neither).
func (p *Pages) saveTemplate(c *gin.Context) {
	id, ok := p.pathID(c, "template")
	if !ok {
		return
	}
	f := readEditForm(c)
	handleForm(p, c, formPost[admin.TemplatePatch]{errs: f.Errors,
		read: func() admin.TemplatePatch { return f.patch(p) },
		// Name every mistake in this one answer, not only the dates'.
		recheck: func(patch admin.TemplatePatch) error {
			return models.CheckTemplateText(*patch.Name, *patch.Description)
		},
		act: func(patch admin.TemplatePatch) (outcome, error) {
			out, err := p.admin.UpdateTemplate(c.Request.Context(), web.Principal(c).Name, id, patch)
			if err != nil {
				return outcome{}, err
			}
			return done(fmt.Sprintf("Saved “%s”.", out.Name), fmt.Sprintf("/admin/templates/%d", id)), nil
		},
		refused: func(_ admin.TemplatePatch, err error) bool { return templateErrors(f.Errors, err, editFields) },
		show:    func(status int) { p.renderTemplate(c, status, &f, nil) },
	})
}

// readEditForm reads the edit form of a template as typed.
func readEditForm(c *gin.Context) editForm {
	f := editForm{Name: c.PostForm("name"), Description: c.PostForm("description"),
		ClaimStartsAt: c.PostForm("claim_starts_at"), ClaimEndsAt: c.PostForm("claim_ends_at"),
		CodeMode: c.PostForm("code_mode"), SharedCode: strings.TrimSpace(c.PostForm("shared_code")),
		Stacking: c.PostForm("stacking"), Errors: formErrors{}}
	f.Eligibility, f.HasEligibility = c.GetPostForm("eligibility")
	return f
}

// patch converts the edit form, its mistakes going to f.Errors. Times are
// read in the deployment's zone (p.formTime).
func (f *editForm) patch(p *Pages) admin.TemplatePatch {
	name, desc := f.Name, strings.TrimSpace(f.Description)
	patch := admin.TemplatePatch{Name: &name, Description: &desc}
	if f.CodeMode != "" {
		mode, code := f.CodeMode, f.SharedCode
		patch.CodeMode = &mode
		if mode == models.CodeModeShared {
			patch.SharedCode = &code
		}
	}
	switch f.Stacking {
	case "": // a form without the field leaves it as it is
	case models.StackingExclusive, models.StackingCombinable:
		stacking := f.Stacking
		patch.Stacking = &stacking
	default:
		f.Errors.add("stacking", "Choose whether it is the only coupon on its order or may join others.")
	}
	if strings.TrimSpace(f.ClaimStartsAt) == "" {
		f.Errors.add("claim_starts_at", "Enter when claims open.")
	}
	patch.ClaimStartsAt = p.formTime(f.Errors, "claim_starts_at", f.ClaimStartsAt)
	patch.ClaimEndsAt = p.formTime(f.Errors, "claim_ends_at", f.ClaimEndsAt)
	patch.ClearClaimEndsAt = strings.TrimSpace(f.ClaimEndsAt) == ""
	if f.HasEligibility {
		// Compiled by the service when saved: a fault comes back beside
		// the field with its line and column (docs/eligibility.md).
		rule := strings.TrimSpace(f.Eligibility)
		patch.Eligibility = &rule
	}
	return patch
}
