package api

import (
	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
)

// The enumerations of the best-of choice (docs/checkout.md, "Choosing the
// best coupons"): a request's choose and a left-out coupon's reason.
var _ = web.AddFieldSchemas(map[string]map[string]any{
	"choose":          {"enum": models.ChooseValues},
	"left_out_reason": {"enum": models.LeftOutReasons},
})
