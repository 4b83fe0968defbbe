package services_test

import (
	"os"
	"testing"

	"github.com/couponsvc/couponsvc/services/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
