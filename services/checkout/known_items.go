package checkout

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/couponsvc/couponsvc/services/core"
)

// knownScan bounds the order lines KnownItems reads for their categories.
const knownScan = 2000

// KnownItems are SKUs and categories seen on the lines of orders, for the
// template form to offer beside its target lists (docs/pages.md).
type KnownItems struct {
	SKUs, Categories []string
}

// KnownItems reads up to limit SKUs (the first in order, through the SKU
// index) and up to limit categories of the latest lines (at most 2000
// lines are read for them), each sorted. Errors: CodeUnavailable.
func (s *Checkout) KnownItems(ctx context.Context, limit int) (*KnownItems, error) {
	out := &KnownItems{}
	db := s.DB.WithContext(ctx)
	if err := db.Model(&OrderLine{}).Distinct("sku").Where("sku <> ''").Order("sku").Limit(limit).
		Pluck("sku", &out.SKUs).Error; err != nil {
		return nil, core.DBError("order lines", err)
	}
	var cats []string
	if err := db.Model(&OrderLine{}).Where("category_ids IS NOT NULL").Order("order_id DESC").Limit(knownScan).
		Pluck("category_ids", &cats).Error; err != nil {
		return nil, core.DBError("order lines", err)
	}
	seen := map[string]bool{}
	for _, raw := range cats {
		var ids []string
		if json.Unmarshal([]byte(raw), &ids) != nil {
			continue
		}
		for _, id := range ids {
			if id != "" && !seen[id] && len(seen) < limit {
				seen[id] = true
				out.Categories = append(out.Categories, id)
			}
		}
	}
	slices.Sort(out.Categories)
	return out, nil
}
