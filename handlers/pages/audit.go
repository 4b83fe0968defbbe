package pages

import (
	"net/http"

	"couponsvc/models"

	"github.com/gin-gonic/gin"
)

// auditCount is how many audit entries the audit page lists.
const auditCount = 300

// auditPage is the data of audit.html.
type auditPage struct {
	basePage
	Entries []models.AuditEntry
}

// showAudit lists the newest audit entries: who did what to which object,
// when and why.
func (p *Pages) showAudit(c *gin.Context) {
	entries, err := p.svc.ListAudit(c.Request.Context(), auditCount)
	if err != nil {
		p.fail(c, err)
		return
	}
	p.render(c, http.StatusOK, "audit", &auditPage{basePage: basePage{Title: "Audit log", Nav: "audit"}, Entries: entries})
}
