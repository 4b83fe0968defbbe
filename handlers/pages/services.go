package pages

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/codes"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/events"
	"github.com/couponsvc/couponsvc/services/reconcile"
	"github.com/couponsvc/couponsvc/services/reports"
)

// The aggregates of services this package calls, each as the methods it
// uses (docs/architecture.md).

// Admin is what this package calls of services/admin (admin.Admin).
type Admin interface {
	AddStock(ctx context.Context, actor string, id int64, delta int64, reason string) (*models.Template, error)
	CreateCampaign(ctx context.Context, actor string, c models.Campaign) (*models.Campaign, error)
	CreateTemplate(ctx context.Context, actor string, t models.Template) (*models.Template, error)
	CreateToken(ctx context.Context, actor, role, name string) (string, *models.APIToken, error)
	DeleteCampaign(ctx context.Context, actor string, id int64) error
	DeleteTemplate(ctx context.Context, actor string, id int64) error
	GetCouponHistory(ctx context.Context, code string) (*admin.CouponHistory, error)
	ListCampaignTemplates(ctx context.Context, campaignID int64) ([]core.TemplateView, error)
	ListCoupons(ctx context.Context, f admin.CouponFilter) (admin.CouponPage, error)
	ListTemplateAudit(ctx context.Context, templateID int64, limit int, beforeID int64) (admin.AuditPage, error)
	ListTokens(ctx context.Context) ([]admin.TokenView, error)
	Login(ctx context.Context, req admin.LoginRequest) (string, *models.User, error)
	Logout(ctx context.Context, sid string) error
	LookupSession(ctx context.Context, sid string) (*admin.Session, error)
	Revoke(ctx context.Context, actor string, code string, returnStock bool, reason string) (*admin.RevokeResult, error)
	RevokeWith(ctx context.Context, actor string, code string, returnStock bool, publicReason string, reason string) (*admin.RevokeResult, error)
	RevokeToken(ctx context.Context, actor string, id int64) (*admin.TokenView, bool, error)
	SearchAudit(ctx context.Context, f admin.AuditFilter) (admin.AuditPage, error)
	TemplateIssued(ctx context.Context, id int64) (bool, error)
	UpdateCampaign(ctx context.Context, actor string, id int64, p admin.CampaignPatch) (*models.Campaign, error)
	UpdateTemplate(ctx context.Context, actor string, id int64, p admin.TemplatePatch) (*models.Template, error)
}

// Checkout is what this package calls of services/checkout (checkout.Checkout).
type Checkout interface {
	LiveOffers(ctx context.Context, currency string) ([]models.Template, error)
	CheckRedemption(ctx context.Context, code string, orderID string, amountCents int64) (*checkout.RedemptionCheck, error)
	CheckShared(ctx context.Context, raw, orderID string, amountCents int64) (*checkout.SharedCheck, error)
	LiveSharedCode(ctx context.Context, raw string) (*models.Template, error)
	MaxCouponCodes() int
	KnownItems(ctx context.Context, limit int) (*checkout.KnownItems, error)
	Confirm(ctx context.Context, req checkout.ConfirmRequest) (*checkout.CheckoutResult, error)
	CouponCodes(ctx context.Context, ids []int64) (map[int64]string, error)
	GetHold(ctx context.Context, orderID string) (*checkout.CheckoutResult, error)
	Hold(ctx context.Context, req checkout.CheckoutRequest) (*checkout.CheckoutResult, error)
	ListUpcomingOffers(ctx context.Context) ([]core.TemplateView, error)
	Redeem(ctx context.Context, req checkout.RedeemRequest) (*checkout.RedeemResult, error)
	Refund(ctx context.Context, req checkout.RefundRequest) (*checkout.RefundResult, error)
	Release(ctx context.Context, actor string, orderID string) (*checkout.ReleaseResult, error)
	ReturnPart(ctx context.Context, actor string, orderID string, returnID string, returned int64) (*checkout.ReturnResult, error)
	PreviewReturnPart(ctx context.Context, orderID string, returned int64) (*checkout.ReturnResult, error)
	OrderItems(ctx context.Context, orderID string) (*checkout.OrderItems, error)
	PreviewReturnLines(ctx context.Context, orderID string, lines []checkout.ReturnLine) (*checkout.ReturnResult, error)
	ReturnLines(ctx context.Context, actor, orderID, returnID string, lines []checkout.ReturnLine) (*checkout.ReturnResult, error)
	PreviewSale(ctx context.Context, req checkout.CheckoutRequest) (*checkout.CheckoutResult, error)
	RedeemSale(ctx context.Context, req checkout.CheckoutRequest, cashier string) (*checkout.CheckoutResult, error)
	Validate(ctx context.Context, req checkout.CheckoutRequest) (*checkout.CheckoutResult, error)
}

// Claims is what this package calls of services/claims (claims.Claims).
type Claims interface {
	PublicRevokeReasons(ctx context.Context, ids []int64) (map[int64]string, error)
}

// Codes is what this package calls of services/codes (codes.Codes).
type Codes interface {
	GetJob(ctx context.Context, id int64) (*models.Job, error)
	ListJobs(ctx context.Context, tid int64, limit int) ([]models.Job, error)
	StartGenerate(ctx context.Context, actor string, tid int64, count int64, pattern string) (*models.Job, error)
	StartImport(ctx context.Context, actor string, tid int64, file io.Reader) (*models.Job, error)
	StartIssue(ctx context.Context, actor string, tid int64, userIDs []string) (*models.Job, error)
	ImportRefusals(ctx context.Context, j *models.Job, limit int) ([]codes.ImportRefusal, error)
}

// Core is what this package calls of services/core (core.Core).
type Core interface {
	KeepForm(ctx context.Context, f core.KeptForm) (string, error)
	TakeForm(ctx context.Context, id string) (*core.KeptForm, error)
	GetCampaign(ctx context.Context, id int64) (*models.Campaign, error)
	GetCoupon(ctx context.Context, code string) (*core.CouponDetail, error)
	GetTemplate(ctx context.Context, id int64) (*models.Template, error)
	ListCampaigns(ctx context.Context) ([]models.Campaign, error)
	ListCashierRedemptions(ctx context.Context, cashier string, limit int) ([]models.UseLog, error)
	ListTemplates(ctx context.Context, offeredOnly bool) ([]core.TemplateView, error)
	ListUserCoupons(ctx context.Context, userID string) ([]models.CouponView, error)
	Now() time.Time
	ViewTemplate(ctx context.Context, id int64) (*core.TemplateView, error)
}

// Events is what this package calls of services/events (events.Events).
type Events interface {
	CheckWebhook(ctx context.Context, in events.WebhookInput) error
	CreateWebhook(ctx context.Context, actor string, in events.WebhookInput) (*events.CreatedWebhook, error)
	DeleteWebhook(ctx context.Context, actor string, id int64) error
	EventPayloads(ctx context.Context, ids []int64) (map[int64]json.RawMessage, error)
	GetWebhook(ctx context.Context, id int64) (*models.WebhookEndpoint, error)
	ListWebhookAttempts(ctx context.Context, id, before int64, limit int) ([]models.WebhookAttempt, int64, error)
	ListWebhooks(ctx context.Context) ([]models.WebhookEndpoint, error)
	ResendDelivery(ctx context.Context, actor string, endpointID int64, deliveryID int64) (*models.WebhookDelivery, error)
	SendTestEvent(ctx context.Context, actor string, id int64) (*models.WebhookDelivery, error)
}

// Reconciler is what this package calls of services/reconcile (reconcile.Reconciler).
type Reconciler interface {
	LastReconcile(ctx context.Context) (reconcile.ReconcileRuns, error)
	Reconcile(ctx context.Context, req reconcile.ReconcileRequest) (*reconcile.ReconcileReport, error)
}

// Reports is what this package calls of services/reports (reports.Reports).
type Reports interface {
	ListCampaignFigures(ctx context.Context) (map[int64]reports.CampaignFigures, error)
	ListTemplateFigures(ctx context.Context) (map[int64]reports.TemplateFigures, error)
	RedemptionReport(ctx context.Context, req reports.ReportRequest) (*reports.RedemptionSummary, error)
	Discounts(ctx context.Context, req reports.DiscountRequest) (*reports.DiscountReport, error)
	TemplateStats(ctx context.Context, id int64, hours int) (*reports.TemplateStats, error)
}
