package checkout

// ClaimRefused says err is a claim's refusal (the claim rule, the
// campaign's budget, the stock, the user's limit or the campaign's
// per-customer cap), not a fault. A checkout with no code answers it when
// its only automatic offer's claim was refused: the pages then show the
// offer not applied, with that reason (docs/automatic-offers.md).
func ClaimRefused(err error) bool { return claimRefused(err) }
