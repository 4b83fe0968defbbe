package models

// What validate and usable choose among the coupons they are given
// (docs/checkout.md, "Choosing the best coupons").
const (
	// ChooseAll prices every coupon given, as a hold would (the default).
	ChooseAll = "all"
	// ChooseBest prices the set of the coupons given (and, with a user,
	// the user's own usable coupons) that the stacking rules allow and that
	// takes the most off the order.
	ChooseBest = "best"
)

// ChooseValues are the values of choose.
var ChooseValues = []string{ChooseAll, ChooseBest}

// Why the best-of choice left a coupon out (docs/checkout.md, "Choosing
// the best coupons").
const (
	// LeftOutRefused: the coupon is refused on its own (its refusal's word
	// says why), as a hold of it alone would be.
	LeftOutRefused = "refused"
	// LeftOutNotCombinable: the stacking rules keep it off the set chosen
	// (an exclusive coupon chosen alone, another coupon of a template
	// chosen, or the cap reached).
	LeftOutNotCombinable = "not_combinable"
	// LeftOutNotBest: the stacking rules would take it, but the set chosen
	// takes more off the order without it.
	LeftOutNotBest = "not_best"
	// LeftOutNotConsidered: past the number of coupons the search weighs.
	LeftOutNotConsidered = "not_considered"
)

// LeftOutReasons are the values of a left-out coupon's reason.
var LeftOutReasons = []string{LeftOutRefused, LeftOutNotCombinable, LeftOutNotBest, LeftOutNotConsidered}
