package core

import (
	"strconv"
	"strings"
)

// PendingMember is one reservation of a claim in its campaign's pending set
// (and, once confirmed, its recent set): the member coupon_deduct.lua writes,
// "tid|user|slot|ordinal|value|request_id". The claim makes the same string to
// confirm or give back its own reservation; the sweeper and reconciliation
// read the members back. User ids cannot hold "|"; the request id (the
// Idempotency-Key) may, and is the last field for that reason. An
// anonymous shopper's claim with a shared code has an empty user and
// ordinal 0: it holds no ordinal (docs/shared-codes.md).
type PendingMember struct {
	TemplateID int64
	UserID     string
	Slot       int64
	Ordinal    int64
	ValueCents int64
	RequestID  string
}

// String is the member as the pending set holds it.
func (m PendingMember) String() string {
	var b strings.Builder
	b.Grow(len(m.UserID) + len(m.RequestID) + 48)
	b.WriteString(strconv.FormatInt(m.TemplateID, 10))
	b.WriteByte('|')
	b.WriteString(m.UserID)
	for _, n := range []int64{m.Slot, m.Ordinal, m.ValueCents} {
		b.WriteByte('|')
		b.WriteString(strconv.FormatInt(n, 10))
	}
	b.WriteByte('|')
	b.WriteString(m.RequestID)
	return b.String()
}

// ParsePendingMember reads a member of a pending or recent set; ok is false
// for anything else (a field missing or empty, a number that is not one).
func ParsePendingMember(s string) (m PendingMember, ok bool) {
	parts := strings.SplitN(s, "|", 6)
	if len(parts) != 6 || parts[5] == "" || parts[1] == "" && parts[3] != "0" {
		return PendingMember{}, false
	}
	var nums [4]int64
	for i, p := range []string{parts[0], parts[2], parts[3], parts[4]} {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return PendingMember{}, false
		}
		nums[i] = n
	}
	return PendingMember{TemplateID: nums[0], UserID: parts[1], Slot: nums[1], Ordinal: nums[2],
		ValueCents: nums[3], RequestID: parts[5]}, true
}
