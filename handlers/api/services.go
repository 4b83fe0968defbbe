package api

import (
	"context"
	"io"
	"time"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/claims"
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
	AuthenticateToken(ctx context.Context, token string) (*models.Principal, error)
	CreateCampaign(ctx context.Context, actor string, c models.Campaign) (*models.Campaign, error)
	CreateTemplate(ctx context.Context, actor string, t models.Template) (*models.Template, error)
	CreateToken(ctx context.Context, actor string, role string, name string) (string, *models.APIToken, error)
	CreateUser(ctx context.Context, actor string, username string, password string, role string) (*models.User, error)
	DeleteCampaign(ctx context.Context, actor string, id int64) error
	DeleteTemplate(ctx context.Context, actor string, id int64) error
	ListTokens(ctx context.Context) ([]admin.TokenView, error)
	RevokeWith(ctx context.Context, actor string, code string, returnStock bool, publicReason string, reason string) (*admin.RevokeResult, error)
	RevokeToken(ctx context.Context, actor string, id int64) (*admin.TokenView, bool, error)
	UpdateCampaign(ctx context.Context, actor string, id int64, p admin.CampaignPatch) (*models.Campaign, error)
	UpdateTemplate(ctx context.Context, actor string, id int64, p admin.TemplatePatch) (*models.Template, error)
}

// Checkout is what this package calls of services/checkout (checkout.Checkout).
type Checkout interface {
	Confirm(ctx context.Context, req checkout.ConfirmRequest) (*checkout.CheckoutResult, error)
	GetHold(ctx context.Context, orderID string) (*checkout.CheckoutResult, error)
	Hold(ctx context.Context, req checkout.CheckoutRequest) (*checkout.CheckoutResult, error)
	MaxCouponCodes() int
	Redeem(ctx context.Context, req checkout.RedeemRequest) (*checkout.RedeemResult, error)
	Refund(ctx context.Context, req checkout.RefundRequest) (*checkout.RefundResult, error)
	Release(ctx context.Context, actor string, orderID string) (*checkout.ReleaseResult, error)
	UsableForCart(ctx context.Context, userID string, amount int64, cart checkout.Cart) (*checkout.Usable, error)
	UsableBestForCart(ctx context.Context, userID string, amount int64, cart checkout.Cart) (*checkout.Usable, error)
	Validate(ctx context.Context, req checkout.CheckoutRequest) (*checkout.CheckoutResult, error)
}

// Claims is what this package calls of services/claims (claims.Claims).
type Claims interface {
	Claim(ctx context.Context, req claims.ClaimRequest) (res *claims.ClaimResult, err error)
	ReplayClaim(ctx context.Context, req claims.ClaimRequest) (*claims.ClaimResult, error)
}

// Codes is what this package calls of services/codes (codes.Codes).
type Codes interface {
	CheckExport(ctx context.Context, tid int64, f codes.ExportFilter) error
	ExportCoupons(ctx context.Context, tid int64, f codes.ExportFilter, w io.Writer) (int64, error)
	GetJob(ctx context.Context, id int64) (*models.Job, error)
	ListCoupons(ctx context.Context, tid int64, f codes.ExportFilter, after int64, limit int) ([]models.CouponView, int64, error)
	StartGenerate(ctx context.Context, actor string, tid int64, count int64, pattern string) (*models.Job, error)
	StartImport(ctx context.Context, actor string, tid int64, file io.Reader) (*models.Job, error)
	StartIssue(ctx context.Context, actor string, tid int64, userIDs []string) (*models.Job, error)
	WriteJobResult(ctx context.Context, id int64, w io.Writer) error
}

// Core is what this package calls of services/core (core.Core).
type Core interface {
	web.IdempotencyStore
	GetCampaign(ctx context.Context, id int64) (*models.Campaign, error)
	GetCoupon(ctx context.Context, code string) (*core.CouponDetail, error)
	ListCampaigns(ctx context.Context) ([]models.Campaign, error)
	ListTemplates(ctx context.Context, offeredOnly bool) ([]core.TemplateView, error)
	ListUserCoupons(ctx context.Context, userID string) ([]models.CouponView, error)
	Metrics() *core.Metrics
	Now() time.Time
	Ready(ctx context.Context) error
	ViewOffer(ctx context.Context, id int64) (*core.TemplateView, error)
	ViewTemplate(ctx context.Context, id int64) (*core.TemplateView, error)
}

// Events is what this package calls of services/events (events.Events).
type Events interface {
	CreateWebhook(ctx context.Context, actor string, in events.WebhookInput) (*events.CreatedWebhook, error)
	DeleteWebhook(ctx context.Context, actor string, id int64) error
	GetWebhook(ctx context.Context, id int64) (*models.WebhookEndpoint, error)
	ListEvents(ctx context.Context, after int64, limit int) (*events.EventPage, error)
	ListWebhookAttempts(ctx context.Context, id, before int64, limit int) ([]models.WebhookAttempt, int64, error)
	LatestEventID(ctx context.Context) (int64, error)
	ListWebhooks(ctx context.Context) ([]models.WebhookEndpoint, error)
	ResendDelivery(ctx context.Context, actor string, endpointID int64, deliveryID int64) (*models.WebhookDelivery, error)
	UpdateWebhook(ctx context.Context, actor string, id int64, in events.WebhookInput) (*models.WebhookEndpoint, error)
}

// Reconciler is what this package calls of services/reconcile (reconcile.Reconciler).
type Reconciler interface {
	Reconcile(ctx context.Context, req reconcile.ReconcileRequest) (*reconcile.ReconcileReport, error)
}

// Reports is what this package calls of services/reports (reports.Reports).
type Reports interface {
	StreamRedemptionReport(ctx context.Context, req reports.ReportRequest, start func(reports.ReportQuery) error, each func(reports.ReportRow) error) error
	TemplateStats(ctx context.Context, id int64, hours int) (*reports.TemplateStats, error)
	Discounts(ctx context.Context, req reports.DiscountRequest) (*reports.DiscountReport, error)
}
