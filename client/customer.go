package client

// CustomerFields is what a shop knows of its customer, sent with a cart for
// the templates' eligibility rules (docs/eligibility.md). The document
// describes it in place in each request, so the generated requests carry an
// unnamed struct of these fields; this alias names that same type, so that
// a caller can build it once and set it on any request.
type CustomerFields = struct {
	// OrdersCount the customer's orders before this one (0: a first order)
	OrdersCount *int64 `json:"orders_count,omitempty"`

	// Tags the shop's tags of the customer (segments), each once or more, as the shop names them
	Tags []string `json:"tags,omitempty"`
}
