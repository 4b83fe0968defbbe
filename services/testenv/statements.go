package testenv

import (
	"testing"

	"gorm.io/gorm"
)

// OnStatement calls f after every statement db sends through gorm (create,
// query, update, delete, row and raw; not BEGIN and COMMIT), under callbacks
// named name plus the kind, so that tests can log or count them.
func OnStatement(t testing.TB, db *gorm.DB, name string, f func(*gorm.DB)) {
	t.Helper()
	cb := db.Callback()
	for _, err := range []error{
		cb.Create().After("gorm:create").Register(name+"_create", f),
		cb.Query().After("gorm:query").Register(name+"_query", f),
		cb.Update().After("gorm:update").Register(name+"_update", f),
		cb.Delete().After("gorm:delete").Register(name+"_delete", f),
		cb.Row().After("gorm:row").Register(name+"_row", f),
		cb.Raw().After("gorm:raw").Register(name+"_raw", f),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}
