package core

import (
	"context"
	"fmt"
	"strings"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// sharedCodesVersion is the migration that stores shared codes in their
// normal form (0011_shared_code_normal_form).
const sharedCodesVersion = 11

// checkSharedCodesFold runs before the migrations when the database is at
// a version that has shared codes (0006) and has not folded them yet: two
// live templates whose codes fold to one normal form cannot both keep it,
// and couponsvc does not choose which poster code changes its discount (nor
// does it keep a code that folds to fewer than 4 characters). It
// refuses, naming every such pair, before anything is changed (the version
// stays clean); the operator archives one or changes its code and starts
// again (docs/migrations.md).
func checkSharedCodesFold(ctx context.Context, db *gorm.DB, dialect string) error {
	st, err := MigrationsStatus(ctx, db, dialect)
	if err != nil {
		return err
	}
	if st.Dirty || st.Version < 6 || st.Version >= sharedCodesVersion || st.Latest < sharedCodesVersion {
		return nil
	}
	var rows []struct {
		ID         int64
		SharedCode string
	}
	if err := db.WithContext(ctx).Raw("SELECT id, shared_code FROM templates WHERE code_mode = ? AND status <> ? ORDER BY id",
		models.CodeModeShared, models.TemplateArchived).Scan(&rows).Error; err != nil {
		return fmt.Errorf("migrate: read the shared codes: %w", err)
	}
	first := map[string]int64{}
	firstCode := map[string]string{}
	var clashes []string
	for _, r := range rows {
		norm := strings.NewReplacer("-", "", " ", "").Replace(r.SharedCode)
		if len(norm) < models.MinSharedCodeLen {
			clashes = append(clashes, fmt.Sprintf("template %d (%s) would have %q, shorter than %d characters",
				r.ID, r.SharedCode, norm, models.MinSharedCodeLen))
			continue
		}
		if id, ok := first[norm]; ok {
			clashes = append(clashes, fmt.Sprintf("templates %d (%s) and %d (%s) would both have %s",
				id, firstCode[norm], r.ID, r.SharedCode, norm))
			continue
		}
		first[norm], firstCode[norm] = r.ID, r.SharedCode
	}
	if len(clashes) > 0 {
		return fmt.Errorf("migrate: migration %d stores shared codes without dashes, and live templates clash: %s; archive one of each pair (or the template) or change its code, then start again (nothing was changed)",
			sharedCodesVersion, strings.Join(clashes, "; "))
	}
	return nil
}
