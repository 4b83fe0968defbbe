package services_test

import (
	"context"
	"testing"

	"couponsvc/models"
	"couponsvc/services"
	"couponsvc/services/testenv"
)

func TestClaimSmoke(t *testing.T) {
	env := testenv.New(t, services.Config{})
	ctx := context.Background()
	c, err := env.Service.CreateCampaign(ctx, "test", models.Campaign{Name: "c", BudgetCents: 0})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := env.Service.CreateTemplate(ctx, "test", models.Template{CampaignID: c.ID, Name: "t", Kind: "fixed", FaceValueCents: 100, TotalStock: 2, PerUserLimit: 1, ValidDays: 3})
	if err != nil {
		t.Fatal(err)
	}
	r, err := env.Service.Claim(ctx, services.ClaimRequest{TemplateID: tp.ID, UserID: "u1", IdempotencyKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v %+v", r, *r.Coupon)
	r2, err := env.Service.Claim(ctx, services.ClaimRequest{TemplateID: tp.ID, UserID: "u1", IdempotencyKey: "k1"})
	if err != nil || !r2.Duplicate || r2.Coupon.ID != r.Coupon.ID {
		t.Fatalf("replay: %+v %v", r2, err)
	}
	_, err = env.Service.Claim(ctx, services.ClaimRequest{TemplateID: tp.ID, UserID: "u1", IdempotencyKey: "k2"})
	if models.ErrorCode(err) != models.CodeUserLimitReached {
		t.Fatalf("limit: %v", err)
	}
	env.FlushRedis(t)
	_, err = env.Service.Claim(ctx, services.ClaimRequest{TemplateID: tp.ID, UserID: "u2", IdempotencyKey: "k3"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.Service.Claim(ctx, services.ClaimRequest{TemplateID: tp.ID, UserID: "u3", IdempotencyKey: "k4"})
	if models.ErrorCode(err) != models.CodeSoldOut {
		t.Fatalf("sold out: %v", err)
	}
}
