// Package migrations embeds the SQL migrations of couponsvc, one folder per
// database dialect, named as golang-migrate reads them:
// <version>_<title>.up.sql. There are no down files: a change is undone by a
// new up migration (see docs/migrations.md).
package migrations

import "embed"

// FS holds mysql/*.up.sql and sqlite/*.up.sql.
//
//go:embed mysql/*.sql sqlite/*.sql
var FS embed.FS
