// Package templates holds the pages of couponsvc: html/template files parsed
// once at start, and the static assets they use (CSS, one small script, the
// icon). Everything is embedded in the binary, so that every page works with
// no request outside the service.
package templates

import "embed"

// FS holds the page templates (*.html) and the static assets (static/).
//
//go:embed *.html static
var FS embed.FS
