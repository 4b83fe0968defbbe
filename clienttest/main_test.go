package clienttest_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/core"
)

// exampleURL is a couponsvc the examples call: the real service on the
// embedded backends (SQLite and an in-process Redis), started by TestMain.
var exampleURL string

const exampleAdminToken = "example-admin-token-0123456789"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "couponsvc-client-example")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := core.OpenBackends(context.Background(), core.BackendConfig{DataDir: dir, Logger: quiet})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer b.Close()
	svc := services.New(b, services.Config{CoreConfig: services.CoreConfig{Logger: quiet}, AdminConfig: services.AdminConfig{BootstrapToken: exampleAdminToken}})
	defer svc.Close()
	srv := httptest.NewServer(handlers.NewRouter(svc, handlers.Options{Logger: quiet}))
	defer srv.Close()
	exampleURL = srv.URL
	return m.Run()
}
