package services_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// allowedImports is the drawing of docs/architecture.md: for each package of
// couponsvc (its path under the module), the packages of couponsvc its
// production files may import. A package missing here may import nothing of
// couponsvc. Keep the two in step.
var allowedImports = map[string][]string{
	"models":             {"models/eligibility"},
	"models/eligibility": nil,
	"lua":                nil,
	"migrations":         nil,
	"templates":          nil,
	"services/core":      {"lua", "migrations", "models", "services/pricing"},
	"services/events":    {"client/webhook", "models", "services/core"},
	"services/claims":    {"lua", "models", "services/core", "services/events"},
	"services/codes":     {"lua", "models", "services/claims", "services/core"},
	"services/checkout":  {"models", "models/eligibility", "services/claims", "services/core", "services/events", "services/pricing"},
	"services/reconcile": {"models", "services/checkout", "services/core"},
	"services/reports":   {"models", "services/core"},
	"services/admin":     {"lua", "models", "services/core", "services/events"},
	"services": {"services/admin", "services/checkout", "services/claims", "services/codes", "services/core",
		"services/events", "services/reconcile", "services/reports"},
	"services/testenv": {"models", "services", "services/admin", "services/checkout", "services/claims",
		"services/codes", "services/core", "services/events", "services/reconcile", "services/reports"},
	"handlers/web": {"models", "services/core", "services/reconcile", "services/reports"},
	"handlers/api": {"handlers/web", "models", "services", "services/admin", "services/checkout", "services/claims",
		"services/codes", "services/core", "services/events", "services/reconcile", "services/reports"},
	"handlers/pages": {"handlers/web", "models", "services", "services/admin", "services/checkout", "services/codes",
		"services/core", "services/events", "services/reconcile", "services/reports", "templates"},
	"handlers":        {"handlers/api", "handlers/pages", "handlers/web", "models", "services"},
	"cmd/couponsvc":   {"handlers", "services", "services/core", "services/reconcile"},
	"cmd/couponbench": {"client", "lua", "services/pricing", "services/pricing/benchcart"},
	// Pricing is pure: it imports no package of the service.
	"services/pricing": nil,
	// What integrators import (the module client/go.mod): nothing of the
	// service. The generator of the client reads the document from the
	// route tables.
	"client":               nil,
	"client/webhook":       {"client"},
	"client/examples/shop": {"client", "client/webhook"},
	"cmd/clientgen":        {"handlers", "models"},
	// The cart of the pricing benchmarks (pricing tests and couponbench).
	"services/pricing/benchcart": {"services/pricing"},
	// Tests only: the answer checker (which finds a route's operation by the
	// document's own path, web.OpenAPIPath) and what the handler tests share.
	"handlers/openapicheck": {"handlers/web"},
	"internal/testsupport": {"handlers", "handlers/api", "handlers/openapicheck", "models", "services",
		"services/admin", "services/checkout", "services/claims", "services/testenv"},
}

// TestImportsFollowTheDrawing reads the imports of every production file of
// the module and fails on an import of couponsvc the drawing does not show.
func TestImportsFollowTheDrawing(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root is not %s: %v", root, err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		allowed, known := allowedImports[pkg]
		if !known {
			t.Errorf("%s: package %s is not in the drawing (docs/architecture.md)", path, pkg)
			return nil
		}
		seen[pkg] = true
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			dep, ok := strings.CutPrefix(p, "github.com/couponsvc/couponsvc/")
			if !ok {
				continue
			}
			if !slices.Contains(allowed, dep) {
				t.Errorf("%s imports %s: not in the drawing (docs/architecture.md)", rel+"/"+filepath.Base(path), dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"services/core", "services/claims", "services/checkout", "handlers/api"} {
		if !seen[pkg] {
			t.Errorf("no production file of %s was read: the walk missed the module", pkg)
		}
	}
}
