package models

import "time"

// MinYear and MaxYear bound every date and time a request names: a report's
// days, an export's or a filter's bounds, a template's claim and validity
// windows (docs/time.md). Outside them a date is a typing mistake, and some
// of them (year 0, year 10000) no database column can hold.
const (
	MinYear = 2000
	MaxYear = 2100
)

// CheckDate is the one check of every date and time a request names: an
// error naming field unless t falls within the years MinYear to MaxYear,
// both included (in UTC for an instant; a date's own year for a date).
func CheckDate(field string, t time.Time) error {
	if y := t.Year(); y < MinYear || y > MaxYear {
		return Invalid(field, "must be within the years %d to %d", MinYear, MaxYear)
	}
	return nil
}

// ParseTime reads an RFC 3339 time field (as 2026-01-02T15:04:05Z), in
// UTC, checked by CheckDate.
func ParseTime(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, Invalid(field, "must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
	}
	t = t.UTC()
	return t, CheckDate(field, t)
}

// ParseDate reads a date field (YYYY-MM-DD, as 2026-03-01), checked by
// CheckDate. The date is returned as midnight UTC of that date.
func ParseDate(field, s string) (time.Time, error) {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, Invalid(field, "must be a date such as 2026-03-01, not %q", s)
	}
	return d, CheckDate(field, d)
}
