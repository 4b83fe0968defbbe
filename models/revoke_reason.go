package models

// A revoke carries two reasons: a public one, chosen from
// RevokePublicReasons, which the shopper's wallet shows, and the admin's
// note, free text kept for the audit log and never shown to the shopper.

// RevokePublicReason is one reason a shopper may be told a coupon was
// revoked: its key (the API's public_reason) and its words.
type RevokePublicReason struct {
	Key, Text string
}

// RevokeOther is the public reason of a revoke that names none (and of the
// revokes made before there were public reasons).
const RevokeOther = "other"

// RevokePublicReasons are the public reasons, in the order the console
// offers them.
var RevokePublicReasons = []RevokePublicReason{
	{"issued_in_error", "issued in error"},
	{"fraud_suspected", "withdrawn after suspected misuse"},
	{"offer_withdrawn", "the offer was withdrawn"},
	{"replaced", "replaced by another coupon"},
	{RevokeOther, "it can no longer be used"},
}

// RevokePublicReasonKeys are the keys of RevokePublicReasons.
func RevokePublicReasonKeys() []string {
	keys := make([]string, len(RevokePublicReasons))
	for i, r := range RevokePublicReasons {
		keys[i] = r.Key
	}
	return keys
}

// RevokePublicText is the words of a public reason, and whether key is one.
func RevokePublicText(key string) (string, bool) {
	for _, r := range RevokePublicReasons {
		if r.Key == key {
			return r.Text, true
		}
	}
	return "", false
}
