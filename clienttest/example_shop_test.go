package clienttest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExampleShop builds the example shop (client/examples/shop) and runs it
// against the real service: every step's line as written, exit code 0.
func TestExampleShop(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "shop")
	build := exec.Command("go", "build", "-o", bin, "./examples/shop")
	build.Dir = filepath.Join("..", "client")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/shop: %v\n%s", err, out)
	}
	run := exec.Command(bin)
	run.Env = append(os.Environ(), "COUPONSVC_URL="+exampleURL, "COUPONSVC_ADMIN_TOKEN="+exampleAdminToken)
	var stderr strings.Builder
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil || run.ProcessState.ExitCode() != 0 {
		t.Fatalf("the shop exited %d (%v): %s\noutput:\n%s", run.ProcessState.ExitCode(), err, stderr.String(), out)
	}
	want := `template: ok fixed active
claim: claimed issued
usable: 1 best discount 1000
second claim: 409 user_limit_reached retryable false
validate: ok 1000 7000
hold: held 7000
confirm: redeemed 7000 sent 2 times, replayed true
return: refunded 1750 250
webhook: 400 refused: webhook: no secret signs this body
webhook: 200 coupon.redeemed used 1000
coupon of true used
coupons: 1
`
	if string(out) != want {
		t.Errorf("the shop printed\n%s\nwant\n%s", out, want)
	}
}
