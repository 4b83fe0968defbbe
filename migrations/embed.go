// Package migrations embeds the SQL migrations of couponsvc, one folder per
// database dialect. Files are applied in name order, each once.
package migrations

import "embed"

// FS holds mysql/*.sql and sqlite/*.sql.
//
//go:embed mysql/*.sql sqlite/*.sql
var FS embed.FS
