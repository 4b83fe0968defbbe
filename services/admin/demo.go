package admin

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"
)

// DemoUser is a user created by SeedDemo, with the password shown once.
type DemoUser struct {
	Username string
	Role     string
	Password string
}

// DemoData is what SeedDemo created.
type DemoData struct {
	Campaign  *models.Campaign
	Templates []*models.Template
	Users     []DemoUser
}

// demoActor is who the demo data is recorded as in the audit log.
const demoActor = "demo"

// SeedDemo fills an empty service with demo data: a campaign with a budget,
// four templates (a fixed amount, a percentage with a cap, a threshold coupon
// with a minimum order, and one with a stock of 5 to show "sold out"), and the
// users admin, cashier and shopper with random passwords. It does nothing and
// returns nil when the database already has users, so that it runs at every
// start and seeds only the first. Errors: CodeUnavailable.
func (s *Admin) SeedDemo(ctx context.Context) (*DemoData, error) {
	var n int64
	if err := s.DB.WithContext(ctx).Model(&models.User{}).Count(&n).Error; err != nil {
		return nil, core.DBError("users", err)
	}
	if n > 0 {
		return nil, nil
	}
	out := &DemoData{}
	// Users first: a crash half-way leaves users, so that a restart does not
	// seed a second campaign next to the first.
	for _, role := range []string{models.RoleAdmin, models.RoleCashier, models.RoleShopper} {
		pw := demoPassword()
		if _, err := s.CreateUser(ctx, demoActor, role, pw, role); err != nil {
			return nil, fmt.Errorf("demo user %s: %w", role, err)
		}
		out.Users = append(out.Users, DemoUser{Username: role, Role: role, Password: pw})
	}
	camp, err := s.CreateCampaign(ctx, demoActor, models.Campaign{Name: "Spring sale", BudgetCents: 500_000})
	if err != nil {
		return nil, fmt.Errorf("demo campaign: %w", err)
	}
	out.Campaign = camp
	// The names state their amounts in the deployment's currency, as the
	// pages show the values (a EUR deployment reads "€5 off", not "$5 off").
	m := demoMoney(s.Cfg.Currency)
	for _, t := range []models.Template{
		{Name: m(500) + " off your order", Description: "Good on anything in the store.",
			Kind: models.KindFixed, FaceValueCents: 500, TotalStock: 1000, PerUserLimit: 2, ValidDays: 30},
		{Name: "15% off, up to " + m(2000), Description: "Fifteen percent off your whole basket.",
			Kind: models.KindPercent, PercentOff: 15, MaxDiscountCents: 2000, TotalStock: 500, PerUserLimit: 1, ValidDays: 14},
		{Name: m(1000) + " off orders of " + m(5000), Description: "Fill a bigger basket and save.",
			Kind: models.KindFixed, FaceValueCents: 1000, MinOrderCents: 5000, TotalStock: 200, PerUserLimit: 1,
			ValidDays: 30, RefundPolicy: models.RefundRestore, ExtendOnRefund: true},
		{Name: "Flash deal: " + m(2500) + " off", Description: "Only five of these. Be quick.",
			Kind: models.KindFixed, FaceValueCents: 2500, MinOrderCents: 10000, TotalStock: 5, PerUserLimit: 1,
			ValidDays: 7, RefundPolicy: models.RefundRecycle},
	} {
		t.CampaignID = camp.ID
		tp, err := s.CreateTemplate(ctx, demoActor, t)
		if err != nil {
			return nil, fmt.Errorf("demo template %q: %w", t.Name, err)
		}
		out.Templates = append(out.Templates, tp)
	}
	return out, nil
}

// demoMoney returns a formatter of amounts in minor units of the currency
// code, in English and without needless decimals ("$5", "€12.50", "¥500").
func demoMoney(code string) func(minor int64) string {
	return func(minor int64) string { return models.FormatMoneyShort(minor, code) }
}

// demoPassword returns a random password of 16 lower-case characters from the
// coupon code alphabet (80 bits): no look-alikes, easy to read from a terminal
// and to type on a phone.
func demoPassword() string {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	b := make([]byte, len(raw))
	for i, r := range raw {
		b[i] = models.CodeAlphabet[int(r)%len(models.CodeAlphabet)]
	}
	return strings.ToLower(string(b))
}
