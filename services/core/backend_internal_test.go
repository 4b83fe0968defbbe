package core

import (
	"testing"

	mysqldriver "github.com/go-sql-driver/mysql"
)

// The MariaDB connection counts the rows an UPDATE matched, whatever the
// configured DSN says (docs/guarantees.md, "Rows affected means rows
// matched").
func TestNormaliseMySQLDSNFoundRows(t *testing.T) {
	for _, in := range []string{"root@tcp(127.0.0.1:3306)/test", "root@tcp(127.0.0.1:3306)/test?clientFoundRows=false"} {
		out, err := normaliseMySQLDSN(in)
		if err != nil {
			t.Fatal(err)
		}
		c, err := mysqldriver.ParseDSN(out)
		if err != nil {
			t.Fatal(err)
		}
		if !c.ClientFoundRows || !c.ParseTime || !c.InterpolateParams {
			t.Fatalf("%s → %s: clientFoundRows %t, parseTime %t, interpolateParams %t", in, out, c.ClientFoundRows, c.ParseTime, c.InterpolateParams)
		}
	}
}
