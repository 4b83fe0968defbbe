package services_test

import (
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/pricing"
	"github.com/couponsvc/couponsvc/services/reconcile"
)

// A coupon refunded from an order with lines and redeemed again on the same
// order by the one-step redemption (and that again, a replay): the refund
// leaves its line discounts on the order (they were paid), the second
// redemption replaces them with its own (no duplicate key, the discount
// counted once) and the returns by line read only those.
func TestRefundedCouponRedeemedAgainOnLinedOrder(t *testing.T) {
	cart := pricing.Cart{Lines: []pricing.Line{line("a", 1, 1_000), line("b", 1, 1_000)}}
	redeem := func(f *holdFixture, c *models.Coupon) (int64, error) {
		res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: "o", Cashier: "till", Cart: checkout.Cart{Lines: cart.Lines}})
		if err != nil {
			return 0, err
		}
		return res.DiscountCents, nil
	}
	first := map[string]func(f *holdFixture, c *models.Coupon){
		"HoldConfirm": func(f *holdFixture, c *models.Coupon) { f.linedOrder("o", cart, c) },
		"OneStep": func(f *holdFixture, c *models.Coupon) {
			if got, err := redeem(f, c); err != nil || got != 100 {
				f.T.Fatalf("first redemption: %d off, %v", got, err)
			}
		},
	}
	for name, redeemFirst := range first {
		t.Run(name, func(t *testing.T) {
			f := newHoldFixture(t, services.Config{})
			c := f.claim(f.tmpl("", 100, 0, 0), "u1")
			redeemFirst(f, c)
			if _, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: c.Code, OrderID: "o", Cashier: "pos"}); err != nil {
				t.Fatal(err)
			}
			if rows := f.storedRows("o"); len(rows) != 2 || rows[0].DiscountCents != 50 || rows[1].DiscountCents != 50 {
				t.Fatalf("a refunded coupon's line discounts after the refund: %+v", rows)
			}
			for try := 0; try < 2; try++ {
				got, err := redeem(f, c)
				if err != nil || got != 100 {
					t.Fatalf("redeemed again (try %d): %d off, %v", try, got, err)
				}
			}
			rows := f.storedRows("o")
			if len(rows) != 2 || rows[0].DiscountCents != 50 || rows[1].DiscountCents != 50 || rows[0].ReturnedDiscountCents != 0 {
				t.Fatalf("rows after the second redemption: %+v", rows)
			}
			if st := f.linedState("o"); st.UseLog[c.ID] != 100 {
				t.Fatalf("live use log after the second redemption: %+v", st)
			}
			r1, err := f.returnLines("o", "r1", rl("a", 1))
			if err != nil || r1.RefundCents != 950 || r1.DiscountReturnedCents != 50 || r1.FullRefund {
				t.Fatalf("return of a: %+v %v", r1, err)
			}
			r2, err := f.returnLines("o", "r2", rl("b", 1))
			if err != nil || r2.RefundCents != 950 || r2.DiscountReturnedCents != 50 || !r2.FullRefund {
				t.Fatalf("return of b: %+v %v", r2, err)
			}
			if got := f.coupon(c.ID); got.Status != models.CouponIssued || got.OrderID != nil {
				t.Fatalf("coupon after the order came back: %s %v", got.Status, got.OrderID)
			}
			if st := f.linedState("o"); len(st.UseLog) != 0 || st.ReturnedCents != 2_000 {
				t.Fatalf("state after the order came back: %+v", st)
			}
			f.checkInvariants()
		})
	}
}

// A free line (unit price 0) is returned like any other, on every backend:
// returning it adds nothing to the order's returned cents, and an order whose
// last kept line is free completes with it.
func TestReturnFreeLine(t *testing.T) {
	cart := pricing.Cart{Lines: []pricing.Line{line("a", 1, 1_000), line("free", 2, 0)}}
	t.Run("FreeFirst", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		c := f.claim(f.tmpl("", 100, 0, 0), "u1")
		f.linedOrder("o", cart, c)
		res, err := f.returnLines("o", "r1", rl("free", 1))
		if err != nil || res.RefundCents != 0 || res.DiscountReturnedCents != 0 || res.FullRefund || res.KeptAmountCents != 1_000 {
			t.Fatalf("return of a free unit: %+v %v", res, err)
		}
		res, err = f.returnLines("o", "r2", rl("a", 1), rl("free", 1))
		if err != nil || res.RefundCents != 900 || res.DiscountReturnedCents != 100 || !res.FullRefund || res.KeptAmountCents != 0 {
			t.Fatalf("return of the rest: %+v %v", res, err)
		}
		if got := f.coupon(c.ID); got.Status != models.CouponIssued {
			t.Fatalf("coupon of the returned order: %s", got.Status)
		}
		if st := f.linedState("o"); st.Returned["free"] != 2 || st.Returned["a"] != 1 || st.ReturnedCents != 1_000 || st.Returns != 2 {
			t.Fatalf("state: %+v", st)
		}
	})
	t.Run("FreeLast", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		c := f.claim(f.tmpl("", 100, 0, 0), "u1")
		f.linedOrder("o", cart, c)
		res, err := f.returnLines("o", "r1", rl("a", 1))
		if err != nil || res.RefundCents != 900 || res.FullRefund || res.KeptAmountCents != 0 {
			t.Fatalf("return of a: %+v %v", res, err)
		}
		if got := f.coupon(c.ID); got.Status != models.CouponUsed {
			t.Fatalf("coupon while a free line is kept: %s", got.Status)
		}
		res, err = f.returnLines("o", "r2", rl("free", 2))
		if err != nil || res.RefundCents != 0 || res.DiscountReturnedCents != 0 || !res.FullRefund || res.KeptAmountCents != 0 {
			t.Fatalf("return of the free line, the last kept: %+v %v", res, err)
		}
		if got := f.coupon(c.ID); got.Status != models.CouponIssued {
			t.Fatalf("coupon of the returned order: %s", got.Status)
		}
		if st := f.linedState("o"); st.Returned["free"] != 2 || len(st.UseLog) != 0 || st.ReturnedCents != 1_000 || st.Returns != 2 {
			t.Fatalf("state: %+v", st)
		}
		f.checkInvariants()
	})
}

// A shared-code redemption retried after its code moved to a new template
// (the first archived, the code given to another) is a replay: duplicate
// with the first coupon, and nothing claimed of the new template. The same
// for a hold.
func TestSharedCodeReplayAfterCodeMoved(t *testing.T) {
	for _, user := range []string{"ann", ""} {
		for _, step := range []string{"Redeem", "Hold"} {
			name := step + "/User"
			if user == "" {
				name = step + "/Anonymous"
			}
			t.Run(name, func(t *testing.T) {
				f := newSharedFixture(t, 5, 3, func(tp *models.Template) { tp.Stacking = models.StackingCombinable })
				send := func() (code string, duplicate bool, err error) {
					if step == "Hold" {
						res, err := f.Checkout.Hold(f.Ctx, checkout.CheckoutRequest{OrderID: "o1", OrderAmountCents: 2_000,
							CouponCodes: []string{"summer10"}, UserID: user, TTLSeconds: 600, Actor: "shop"})
						if err != nil {
							return "", false, err
						}
						return res.Coupons[0].CouponCode, res.Duplicate, nil
					}
					res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "summer10", OrderID: "o1",
						OrderAmountCents: 2_000, UserID: user, Cashier: "till"})
					if err != nil {
						return "", false, err
					}
					return res.Coupon.Code, res.Duplicate, nil
				}
				first, dup, err := send()
				if err != nil || dup {
					t.Fatalf("first: %s duplicate=%t %v", first, dup, err)
				}
				archived := models.TemplateArchived
				if _, err := f.Admin.UpdateTemplate(f.Ctx, "admin", f.tp.ID, admin.TemplatePatch{Status: &archived}); err != nil {
					t.Fatal(err)
				}
				moved := f.template(f.campaign.ID, 5, 3, 700, func(tp *models.Template) {
					tp.CodeMode, tp.SharedCode, tp.Stacking = models.CodeModeShared, "summer10", models.StackingCombinable
				})
				again, dup, err := send()
				if err != nil || !dup || again != first {
					t.Fatalf("replay after the code moved: %s duplicate=%t %v, want duplicate of %s", again, dup, err, first)
				}
				var onOrder, ofMoved int64
				f.Backends.DB.Table("order_coupons").Where("order_id = ?", "o1").Count(&onOrder)
				f.Backends.DB.Model(&models.Coupon{}).Where("template_id = ?", moved.ID).Count(&ofMoved)
				if onOrder != 1 || ofMoved != 0 {
					t.Fatalf("after the replay: %d coupons on the order, %d of the new template; want 1 and 0", onOrder, ofMoved)
				}
			})
		}
	}
}

// A completing return cut short by a crash (its commit done, its refunds
// not): reconcile's report lists the order once the return is older than
// checkout.ReturnFinishGrace; a repair by reconcile, the background repair
// pass or the client's replay finishes it with the same result (each coupon
// refunded by its template's policy), and whatever comes after changes
// nothing.
func TestCompletingReturnCutShort(t *testing.T) {
	for _, kind := range []string{"Lines", "Amount"} {
		for _, finisher := range []string{"Reconcile", "RepairPass", "Replay"} {
			t.Run(kind+"/"+finisher, func(t *testing.T) {
				f := newHoldFixture(t, services.Config{})
				restore := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
				tp := f.tmpl(models.StackingCombinable, 200, 0, 0)
				f.retemplate(tp, func(tp *models.Template) { tp.RefundPolicy = models.RefundRecycle })
				recycle := f.claim(tp, "u1")
				dying := f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}})
				dying.SetReturnHook(func(string) bool { return true })
				var last func(s *checkout.Checkout) (*checkout.ReturnResult, error)
				if kind == "Lines" {
					f.linedOrder("o", pricing.Cart{Lines: []pricing.Line{line("a", 1, 1_000), line("b", 1, 1_000)}}, restore, recycle)
					if _, err := f.returnLines("o", "r1", rl("a", 1)); err != nil {
						t.Fatal(err)
					}
					last = func(s *checkout.Checkout) (*checkout.ReturnResult, error) {
						return s.ReturnLines(f.Ctx, "pos", "o", "r2", []checkout.ReturnLine{rl("b", 1)})
					}
				} else {
					if _, err := f.hold("o", 2_000, 600, restore, recycle); err != nil {
						t.Fatal(err)
					}
					if _, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o"}); err != nil {
						t.Fatal(err)
					}
					if _, err := f.Checkout.ReturnPart(f.Ctx, "pos", "o", "r1", 1_000); err != nil {
						t.Fatal(err)
					}
					last = func(s *checkout.Checkout) (*checkout.ReturnResult, error) {
						return s.ReturnPart(f.Ctx, "pos", "o", "r2", 1_000)
					}
				}
				if _, err := last(dying.Checkout); err == nil {
					t.Fatal("the completing return was not cut short")
				}
				if a, b := f.coupon(restore.ID), f.coupon(recycle.ID); a.Status != models.CouponUsed || b.Status != models.CouponUsed {
					t.Fatalf("coupons after the crash: %s %s, want both used", a.Status, b.Status)
				}
				rep, err := f.Reconciler.Reconcile(f.Ctx, reconcile.ReconcileRequest{Actor: "admin"})
				if err != nil || len(rep.UnfinishedReturns) != 0 {
					t.Fatalf("report within the grace: %+v %v", rep.UnfinishedReturns, err)
				}
				f.Clock.Advance(checkout.ReturnFinishGrace + time.Second)
				rep, err = f.Reconciler.Reconcile(f.Ctx, reconcile.ReconcileRequest{Actor: "admin"})
				want := reconcile.UnfinishedReturn{OrderID: "o", ReturnID: "r2", Coupons: 2}
				if err != nil || len(rep.UnfinishedReturns) != 1 || rep.UnfinishedReturns[0] != want {
					t.Fatalf("report: %+v %v, want %+v", rep.UnfinishedReturns, err, want)
				}
				switch finisher {
				case "Reconcile":
					rep, err = f.Reconciler.Reconcile(f.Ctx, reconcile.ReconcileRequest{Actor: "admin", Repair: true})
					want.Finished = true
					if err != nil || len(rep.UnfinishedReturns) != 1 || rep.UnfinishedReturns[0] != want {
						t.Fatalf("repair: %+v %v", rep.UnfinishedReturns, err)
					}
				case "RepairPass":
					st, err := f.Env.Service.RepairPass(f.Ctx)
					if err != nil || st.ReturnsFinished != 1 {
						t.Fatalf("repair pass: %+v %v", st, err)
					}
				case "Replay":
					res, err := last(f.Checkout)
					if err != nil || !res.Duplicate || !res.FullRefund || len(res.Refunds) != 2 {
						t.Fatalf("the client's replay: %+v %v", res, err)
					}
				}
				check := func(when string) {
					t.Helper()
					a, b := f.coupon(restore.ID), f.coupon(recycle.ID)
					if a.Status != models.CouponIssued || a.OrderID != nil || b.Status != models.CouponRevoked || b.Slot != nil {
						t.Fatalf("%s: coupons %s %v, %s %v; want issued (restore) and revoked without a slot (recycle)", when, a.Status, a.OrderID, b.Status, b.Slot)
					}
					if n := f.audits("coupon.refund"); n != 2 {
						t.Fatalf("%s: %d coupon.refund audit entries, want 2", when, n)
					}
					var live int64
					f.Backends.DB.Model(&models.UseLog{}).Where("order_id = ? AND undo_flag = ?", "o", false).Count(&live)
					if live != 0 {
						t.Fatalf("%s: %d live use log rows", when, live)
					}
					f.checkInvariants()
				}
				check("finished")
				// Whatever comes next changes nothing: the client's replay,
				// a report, a repair, a pass.
				res, err := last(f.Checkout)
				if err != nil || !res.Duplicate || len(res.Refunds) != 0 {
					t.Fatalf("replay after the finish: %+v %v", res, err)
				}
				rep, err = f.Reconciler.Reconcile(f.Ctx, reconcile.ReconcileRequest{Actor: "admin", Repair: true})
				if err != nil || len(rep.UnfinishedReturns) != 0 || rep.Drifted() != 0 || rep.BudgetsDrifted() != 0 {
					t.Fatalf("report after the finish: %+v %v", rep, err)
				}
				if st, err := f.Env.Service.RepairPass(f.Ctx); err != nil || st.ReturnsFinished != 0 {
					t.Fatalf("pass after the finish: %+v %v", st, err)
				}
				check("after the finish")
			})
		}
	}
}
