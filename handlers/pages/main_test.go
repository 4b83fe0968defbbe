package pages_test

import (
	"os"
	"testing"

	"couponsvc/services/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
