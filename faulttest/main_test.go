// Package faulttest is the fault suite (docs/failures.md): processes killed
// mid-flight (SIGKILL) and stopped (SIGTERM), Redis restarted empty during a
// flash claim, the database cut off during claims and redemptions, and two
// instances sharing the backends. Each test prints its figures (requests,
// results by kind, drift found) with t.Logf and on stdout, so that CI logs
// show them for passing tests too.
//
// The tests run on the embedded default, or on the real backends named by
// COUPON_TEST_MYSQL_DSN and COUPON_TEST_REDIS_ADDR, like every integration
// package. Only loopback addresses are used.
package faulttest

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/couponsvc/couponsvc/services/testenv"

	mysqldriver "github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
)

// raceEnabled is set by race_test.go when the tests run with -race: the
// binary under test is then built with -race too, which reuses the packages
// `go test -race` just compiled (and catches races in the server).
var raceEnabled bool

// binDir holds the couponsvc binary built for this run.
var binDir string

// quietRedisLog drops go-redis's own log lines ("failed to dial"), which
// the faults provoke by the hundred; the tests report what the clients saw.
type quietRedisLog struct{}

func (quietRedisLog) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	if os.Getenv("COUPON_TEST_LOG") == "" {
		redis.SetLogger(quietRedisLog{})
		_ = mysqldriver.SetLogger(log.New(io.Discard, "", 0)) // "closing bad idle connection"
		slog.SetDefault(testenv.Logger())                     // the handlers log every 503 there
	}
	var err error
	binDir, err = os.MkdirTemp("", "couponsvc-faulttest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := testenv.Main(m)
	os.RemoveAll(binDir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// couponsvcBinary builds cmd/couponsvc once per run and returns its path.
func couponsvcBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		// go test puts the GOROOT/bin of the go that runs it first in PATH.
		goTool, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("find the go tool: %w", err)
			return
		}
		binPath = filepath.Join(binDir, "couponsvc")
		args := []string{"build", "-o", binPath}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "github.com/couponsvc/couponsvc/cmd/couponsvc")
		out, err := exec.Command(goTool, args...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go %v: %v\n%s", args, err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}
