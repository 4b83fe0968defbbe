package clienttest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// consumer is a shop's program using the client and its webhook package.
const consumer = `package main

import (
	"fmt"
	"time"

	"github.com/couponsvc/couponsvc/client"
	"github.com/couponsvc/couponsvc/client/webhook"
)

func main() {
	c, err := client.New("http://127.0.0.1:1", "token")
	fmt.Println(c != nil, err, webhook.Sign("s", time.Unix(0, 0), nil) != "")
}
`

// TestConsumerModuleLinksOnlyTheClient: a fresh module requiring the
// client's module path (with a local replace, as publishing is not
// possible here) tidies offline and builds, its go.sum holds no line (the
// client requires nothing) and it links no package but the standard
// library's and the client's: none of the server's gin, gorm, go-redis or
// quic-go.
func TestConsumerModuleLinksOnlyTheClient(t *testing.T) {
	clientDir, err := filepath.Abs("../client")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goMod := "module example.com/shop\n\ngo 1.26.8\n\nrequire github.com/couponsvc/couponsvc/client v0.0.0\n\n" +
		"replace github.com/couponsvc/couponsvc/client => " + clientDir + "\n"
	for name, text := range map[string]string{"go.mod": goMod, "main.go": consumer} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		// Offline, outside this repository's go.work.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	goCmd("mod", "tidy")
	goCmd("build", "-o", filepath.Join(dir, "shop"), ".")
	sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(sum)) != "" {
		t.Errorf("the consumer's go.sum holds lines, want none:\n%s", sum)
	}
	for _, dep := range strings.Fields(goCmd("list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")) {
		if dep != "example.com/shop" && !strings.HasPrefix(dep, "github.com/couponsvc/couponsvc/client") {
			t.Errorf("the consumer links %s: want only the client's packages", dep)
		}
	}
}
