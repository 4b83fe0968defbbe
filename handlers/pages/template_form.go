package pages

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// formMoneyDigits reads an amount field in a currency of digits minor
// digits as minor units; a blank one is 0 unless required.
func formMoneyDigits(errs formErrors, field, value string, required bool, digits int) int64 {
	example := newMoneyFormat("").input(1250)
	if digits != 2 {
		example = moneyFormat{digits: digits}.input(1250 * pow10(digits))
	}
	if strings.TrimSpace(value) == "" {
		if required {
			errs.add(field, "Enter an amount, such as "+example+".")
		}
		return 0
	}
	cents, ok := parseMoneyDigits(value, digits)
	if !ok {
		errs.add(field, "Enter an amount, such as "+example+".")
		return 0
	}
	return cents
}

// formList reads a target list: entries one a line or separated by
// commas, trimmed, blanks dropped (the service sorts them and drops
// repeats).
func formList(value string) []string {
	var out []string
	for _, entry := range strings.FieldsFunc(value, func(r rune) bool { return r == '\n' || r == '\r' || r == ',' }) {
		if entry = strings.TrimSpace(entry); entry != "" {
			out = append(out, entry)
		}
	}
	return out
}

// formTiers reads the tiers textarea: one tier a line, "minimum: amount"
// or "minimum: percent%" (100.00: 15.00, 200: 10%, 300: 12.5%; a percent
// with up to two decimals, read as basis points; a minimum written "3
// items" makes a quantity tier), amounts in the
// currency's digits. Each line that cannot be read is named by its row.
func formTiers(errs formErrors, value string, digits int) []models.Tier {
	var tiers []models.Tier
	var bad []string
	row := 0
	for _, line := range strings.Split(value, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		row++
		minText, offText, ok := strings.Cut(line, ":")
		offText = strings.TrimSpace(offText)
		var tier models.Tier
		var okMin bool
		if n, isQty := quantityText(minText); isQty {
			tier.MinQuantity, okMin = n, n > 0
		} else {
			tier.MinCents, okMin = parseMoneyDigits(minText, digits)
		}
		okOff := false
		if pct, isPct := strings.CutSuffix(offText, "%"); isPct {
			tier.PercentOffBP, okOff = parsePercent(pct)
		} else {
			tier.OffCents, okOff = parseMoneyDigits(offText, digits)
			okOff = okOff && tier.OffCents > 0
		}
		if !ok || !okMin || !okOff {
			bad = append(bad, fmt.Sprintf("Row %d: write a minimum, a colon and an amount or a percentage off.", row))
			continue
		}
		tiers = append(tiers, tier)
	}
	switch {
	case len(bad) > 0:
		errs.add("tiers", strings.Join(bad, " ")+" For example 100.00: 15.00 or 200: 10%.")
	case row == 0:
		errs.add("tiers", "Enter at least one tier, such as 100.00: 15.00.")
	}
	return tiers
}

// quantityText reads a tier's minimum written as items ("3 items", "1
// item"): isQty says it was written so, n is the number (0 if unreadable).
func quantityText(s string) (n int64, isQty bool) {
	s = strings.TrimSpace(s)
	num, ok := strings.CutSuffix(s, "items")
	if !ok {
		num, ok = strings.CutSuffix(s, "item")
	}
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil {
		return 0, true
	}
	return n, true
}

// parsePercent reads a percent typed by a person, with up to two decimals
// ("33.33", "20.5", "100"), as basis points; ok is false for anything
// else, or for 0.
func parsePercent(s string) (bp int64, ok bool) {
	whole, frac, dotted := strings.Cut(strings.TrimSpace(s), ".")
	if whole == "" || len(whole) > 5 || len(frac) > 2 || (dotted && frac == "") {
		return 0, false
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	bp = w * 100
	if frac != "" {
		f, _ := strconv.ParseInt(frac, 10, 64)
		if len(frac) == 1 {
			f *= 10
		}
		bp += f
	}
	return bp, bp > 0
}

// formPercentPair reads a percent the form takes as a whole number (field)
// or with decimals (exactField): one of them, the other left empty. It
// returns what the service takes, percent_off and percent_off_bp (or
// get_percent's), and names the field at fault.
func formPercentPair(errs formErrors, field, value, exactField, exact string) (whole, bp int64) {
	if strings.TrimSpace(exact) == "" {
		return formInt(errs, field, value, true), 0
	}
	if strings.TrimSpace(value) != "" {
		errs.add(exactField, "Give a whole percentage or one with decimals, not both.")
		return 0, 0
	}
	bp, ok := parsePercent(exact)
	if !ok {
		errs.add(exactField, "Enter a percentage such as 33.33, with at most two decimals.")
	}
	return 0, bp
}

// campaignCurrency is the currency of the campaign a form names by id, or
// the deployment's when it names none that can be read.
func (p *Pages) campaignCurrency(c *gin.Context, id string) string {
	n, err := strconv.ParseInt(strings.TrimSpace(id), 10, 64)
	if err != nil || n <= 0 {
		return p.money.code
	}
	camp, err := p.core.GetCampaign(c.Request.Context(), n)
	if err != nil || camp.Currency == "" {
		return p.money.code
	}
	return camp.Currency
}
