package pages

import (
	"net/http"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// Routes is the table of the pages and their form posts, in the style of the
// API's (handlers/api/routes.go): adding a page is one row and a handler, a
// method of *Pages in a file named after it. Each row is a page: its forms
// are posted as application/x-www-form-urlencoded with a CSRF token; it
// answers HTML (or a redirect after a successful post). The rows may be made
// from a nil *Pages (handlers.RouteTable does, for the tests).
func (p *Pages) Routes() []web.Route {
	shopper, cashier, admin := web.Roles(models.RoleShopper), web.Roles(models.RoleCashier), web.Roles(models.RoleAdmin)
	cashierOrAdmin := web.Roles(models.RoleCashier, models.RoleAdmin)
	rows := []web.Route{
		{Method: "GET", Path: "/static/*file", Handler: p.serveStatic, Asset: true,
			Summary: "The pages' static assets (fingerprinted names)", Status: 200,
			Raw: &web.RawAnswer{MediaType: "application/octet-stream", Schema: map[string]any{"type": "string", "format": "binary"}}},
		{Method: "GET", Path: "/favicon.ico", Asset: true, Status: 301, Summary: "Redirects to the icon",
			Handler: func(c *gin.Context) { c.Redirect(http.StatusMovedPermanently, p.assets["favicon.svg"]) }},

		{Method: "GET", Path: "/", Handler: p.showShop, Summary: "The shop: coupons on offer with the stock left"},
		{Method: "GET", Path: "/login", Handler: p.showLogin, Summary: "The login form"},
		{Method: "POST", Path: "/login", Handler: p.login, Summary: "Log in"},
		{Method: "GET", Path: "/logout", Handler: p.showLogout, Summary: "The logout confirmation"},
		{Method: "POST", Path: "/logout", Handler: p.logout, Summary: "Log out"},
		{Method: "GET", Path: "/wallet", Roles: shopper, Handler: p.showWallet,
			Summary: "The shopper's coupons, each with its QR code a tap away"},
		{Method: "GET", Path: "/wallet/qr/:code", Roles: shopper, Handler: p.showCouponQR,
			Summary: "The QR code of one of the shopper's own coupons, as an SVG image", Status: 200,
			Raw: &web.RawAnswer{MediaType: "image/svg+xml", Schema: map[string]any{"type": "string"}}},
		{Method: "GET", Path: "/checkout", Roles: shopper, Handler: p.showCheckout,
			Summary: "The shopper's cart with a \"Have a code?\" field"},
		{Method: "POST", Path: "/checkout/check", Roles: shopper, Handler: p.checkCart,
			Summary: "Check codes against the cart: the discount per item and the total to pay"},
		{Method: "POST", Path: "/checkout/order", Roles: shopper, Handler: p.placeOrder,
			Summary: "Place the order, applying its codes (once per order id)"},

		{Method: "GET", Path: "/pos", Roles: cashier, Handler: p.showPOS, Summary: "The cashier's checkout"},
		{Method: "POST", Path: "/pos/preview", Roles: cashier, Handler: p.previewRedemption,
			Summary: "Preview a redemption's discount"},
		{Method: "POST", Path: "/pos/redeem", Roles: cashier, Handler: p.redeemAtTill, Summary: "Redeem a coupon"},
		{Method: "POST", Path: "/pos/refund", Roles: cashier, Handler: p.refundAtTill, Summary: "Refund a coupon"},
		{Method: "GET", Path: "/pos/hold", Roles: cashier, Handler: p.showHold,
			Summary: "Look up an online order's hold, with the partial return form"},
		{Method: "POST", Path: "/pos/hold/confirm", Roles: cashier, Handler: p.confirmHold,
			Summary: "Confirm an online order's hold"},
		{Method: "POST", Path: "/pos/hold/release", Roles: cashier, Handler: p.releaseHold,
			Summary: "Release an online order's hold"},
		{Method: "POST", Path: "/pos/return/preview", Roles: cashier, Handler: p.previewReturn,
			Summary: "Preview a partial return: what is kept and what is taken back"},
		{Method: "POST", Path: "/pos/return", Roles: cashier, Handler: p.returnPart,
			Summary: "Return part of an order"},
		{Method: "GET", Path: "/pos/return", Roles: cashierOrAdmin, Handler: p.showReturnItems,
			Summary: "An order's items to return, with the units kept and returned and the discount on each"},
		{Method: "POST", Path: "/pos/return/items/preview", Roles: cashierOrAdmin, Handler: p.previewReturnItems,
			Summary: "Preview a return by item: the money to hand back and the discount taken back"},
		{Method: "POST", Path: "/pos/return/items", Roles: cashierOrAdmin, Handler: p.recordReturnItems,
			Summary: "Record a return by item under its return id"},

		{Method: "GET", Path: "/admin", Roles: admin, Handler: p.showConsole, Summary: "The admin console with live figures"},
		{Method: "GET", Path: "/admin/campaigns/new", Roles: admin, Handler: p.showNewCampaign,
			Summary: "The new campaign form"},
		{Method: "POST", Path: "/admin/campaigns", Roles: admin, Handler: p.createCampaign, Summary: "Create a campaign"},
		{Method: "GET", Path: "/admin/campaigns/:id", Roles: admin, Handler: p.showCampaign,
			Summary: "A campaign: its edit form, pause button and templates"},
		{Method: "POST", Path: "/admin/campaigns/:id", Roles: admin, Handler: p.saveCampaign, Summary: "Rename a campaign"},
		{Method: "POST", Path: "/admin/campaigns/:id/status", Roles: admin, Handler: p.setCampaignStatus,
			Summary: "Pause or resume a campaign"},
		{Method: "GET", Path: "/admin/templates/new", Roles: admin, Handler: p.showNewTemplate,
			Summary: "The new template form"},
		{Method: "POST", Path: "/admin/templates", Roles: admin, Handler: p.createTemplate, Summary: "Create a template"},
		{Method: "POST", Path: "/admin/templates/describe", Roles: admin, Handler: p.describeTemplate,
			Summary: "The new template form's coupon in words (creates nothing)"},
		{Method: "GET", Path: "/admin/templates/:id", Roles: admin, Handler: p.showTemplate,
			Summary: "A template: figures, charts, edit form"},
		{Method: "POST", Path: "/admin/templates/:id", Roles: admin, Handler: p.saveTemplate, Summary: "Edit a template"},
		{Method: "POST", Path: "/admin/templates/:id/status", Roles: admin, Handler: p.setTemplateStatus,
			Summary: "Pause or resume a template"},
		{Method: "POST", Path: "/admin/templates/:id/stock", Roles: admin, Handler: p.addStock, Summary: "Add stock"},
		{Method: "POST", Path: "/admin/templates/:id/delete", Roles: admin, Handler: p.deleteTemplate,
			Summary: "Delete a template that never issued a coupon"},
		{Method: "POST", Path: "/admin/campaigns/:id/delete", Roles: admin, Handler: p.deleteCampaign,
			Summary: "Delete a campaign without templates"},
		{Method: "GET", Path: "/admin/templates/:id/jobs", Roles: admin, Handler: p.showTemplateJobs,
			Summary: "A template's bulk codes, import, export and issue to a list, with its jobs"},
		{Method: "POST", Path: "/admin/templates/:id/codes", Roles: admin, Handler: p.startGenerate, Summary: "Make bearer codes (a job)"},
		{Method: "POST", Path: "/admin/templates/:id/codes/import", Roles: admin, Handler: p.startImport,
			Summary: "Import codes from a CSV file (a job)", MaxBody: maxImportForm},
		{Method: "POST", Path: "/admin/templates/:id/issue", Roles: admin, Handler: p.startIssue,
			Summary: "Give a coupon to each user of a list (a job)", MaxBody: 8 << 20},
		{Method: "GET", Path: "/admin/jobs/:id", Roles: admin, Handler: p.showJob, Summary: "A job's progress and result"},
		{Method: "GET", Path: "/admin/coupons", Roles: admin, Handler: p.showCoupons, Summary: "Look a coupon up"},
		{Method: "POST", Path: "/admin/coupons/revoke", Roles: admin, Handler: p.revokeCoupon, Summary: "Revoke a coupon"},
		{Method: "GET", Path: "/admin/reconcile", Roles: admin, Handler: p.showReconcile,
			Summary: "The reconciliation report"},
		{Method: "POST", Path: "/admin/reconcile", Roles: admin, Handler: p.runReconcile,
			Summary: "Run a reconciliation (and repair)"},
		{Method: "GET", Path: "/admin/tokens", Roles: admin, Handler: p.showTokens,
			Summary: "The API tokens, with a revoke button each and the form that makes one"},
		{Method: "POST", Path: "/admin/tokens", Roles: admin, Handler: p.createToken,
			Summary: "Make an API token (its secret shown once)"},
		{Method: "POST", Path: "/admin/tokens/:id/revoke", Roles: admin, Handler: p.revokeToken,
			Summary: "Revoke an API token"},
		{Method: "GET", Path: "/admin/webhooks", Roles: admin, Handler: p.showWebhooks,
			Summary: "The webhook endpoints, with the form that registers one"},
		{Method: "POST", Path: "/admin/webhooks", Roles: admin, Handler: p.createWebhook,
			Summary: "Register a webhook endpoint (its secret shown once)"},
		{Method: "GET", Path: "/admin/webhooks/:id", Roles: admin, Handler: p.showWebhook,
			Summary: "A webhook endpoint's delivery log, with a resend button each"},
		{Method: "POST", Path: "/admin/webhooks/:id/test", Roles: admin, Handler: p.sendTestEvent,
			Summary: "Send a webhook.test event to one endpoint"},
		{Method: "POST", Path: "/admin/webhooks/:id/delete", Roles: admin, Handler: p.deleteWebhook,
			Summary: "Delete a webhook endpoint"},
		{Method: "POST", Path: "/admin/webhooks/:id/deliveries/:delivery/resend", Roles: admin, Handler: p.resendDelivery,
			Summary: "Send a delivery again"},
		{Method: "GET", Path: "/admin/audit", Roles: admin, Handler: p.showAudit, Summary: "The audit log"},
		{Method: "GET", Path: "/admin/reports", Roles: admin, Handler: p.showReports,
			Summary: "Redemptions and discounts by day, template and cashier: chart, table and CSV link"},
	}
	for i := range rows {
		rows[i].Page = true
	}
	return rows
}
