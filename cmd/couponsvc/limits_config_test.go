package main

import (
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/handlers"
)

func TestLoadLimits(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    handlers.Limits
		proxies int
		wantErr bool
	}{
		{name: "Defaults", want: handlers.Limits{ClaimsPerUser: 20, ClaimsPerAddr: 120, BadTokensPerAddr: 30, MaxInflightClaims: 512, RequestTimeout: 10 * time.Second,
			ValidatesPerCaller: 1200, ValidatesPerUser: 120}},
		{name: "Set", env: map[string]string{"COUPON_RATE_USER_PER_MIN": "5", "COUPON_RATE_ADDR_PER_MIN": "50", "COUPON_RATE_BAD_TOKEN_PER_MIN": "7",
			"COUPON_MAX_INFLIGHT_CLAIMS": "64", "COUPON_REQUEST_TIMEOUT": "3s", "COUPON_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.1,::1",
			"COUPON_RATE_VALIDATE_PER_MIN": "300", "COUPON_RATE_VALIDATE_USER_PER_MIN": "25"},
			want: handlers.Limits{ClaimsPerUser: 5, ClaimsPerAddr: 50, BadTokensPerAddr: 7, MaxInflightClaims: 64, RequestTimeout: 3 * time.Second,
				ValidatesPerCaller: 300, ValidatesPerUser: 25}, proxies: 3},
		{name: "ZeroTurnsOff", env: map[string]string{"COUPON_RATE_USER_PER_MIN": "0", "COUPON_RATE_ADDR_PER_MIN": "0", "COUPON_RATE_BAD_TOKEN_PER_MIN": "0", "COUPON_MAX_INFLIGHT_CLAIMS": "0",
			"COUPON_RATE_VALIDATE_PER_MIN": "0", "COUPON_RATE_VALIDATE_USER_PER_MIN": "0"},
			want: handlers.Limits{RequestTimeout: 10 * time.Second}},
		{name: "ErrNegative", env: map[string]string{"COUPON_RATE_USER_PER_MIN": "-1"}, wantErr: true},
		{name: "ErrNotANumber", env: map[string]string{"COUPON_RATE_ADDR_PER_MIN": "lots"}, wantErr: true},
		{name: "ErrBadTokens", env: map[string]string{"COUPON_RATE_BAD_TOKEN_PER_MIN": "-3"}, wantErr: true},
		{name: "ErrValidate", env: map[string]string{"COUPON_RATE_VALIDATE_USER_PER_MIN": "-5"}, wantErr: true},
		{name: "ErrInflight", env: map[string]string{"COUPON_MAX_INFLIGHT_CLAIMS": "1.5"}, wantErr: true},
		{name: "ErrTimeout", env: map[string]string{"COUPON_REQUEST_TIMEOUT": "10"}, wantErr: true},
		{name: "ErrTimeoutTooShort", env: map[string]string{"COUPON_REQUEST_TIMEOUT": "10ms"}, wantErr: true},
		{name: "ErrProxy", env: map[string]string{"COUPON_TRUSTED_PROXIES": "10.0.0.0/8,proxy.local"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadConfig(func(k string) string { return tc.env[k] })
			if tc.wantErr {
				if err == nil {
					t.Fatalf("no error for %v", tc.env)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Limits != tc.want || len(c.TrustedProxies) != tc.proxies {
				t.Fatalf("limits %+v proxies %v, want %+v and %d proxies", c.Limits, c.TrustedProxies, tc.want, tc.proxies)
			}
		})
	}
}

func TestLoadMaxCouponsPerOrder(t *testing.T) {
	for env, want := range map[string]int{"": 0, "3": 3, "100": 100, "0": -1, "101": -1, "x": -1} {
		c, err := loadConfig(func(k string) string {
			if k == "COUPON_MAX_COUPONS_PER_ORDER" {
				return env
			}
			return ""
		})
		switch {
		case want < 0 && err == nil:
			t.Errorf("%q: no error", env)
		case want >= 0 && (err != nil || c.MaxCouponsPerOrder != want):
			t.Errorf("%q: %d %v, want %d", env, c.MaxCouponsPerOrder, err, want)
		}
	}
}

// COUPON_DB_MAX_OPEN bounds the MySQL pool; unset leaves core.OpenDB's 64.
func TestLoadDBMaxOpen(t *testing.T) {
	for env, want := range map[string]int{"": 0, "1": 1, "16": 16, "1000": 1000, "0": -1, "1001": -1, "-3": -1, "x": -1} {
		c, err := loadConfig(func(k string) string {
			if k == "COUPON_DB_MAX_OPEN" {
				return env
			}
			return ""
		})
		switch {
		case want < 0 && err == nil:
			t.Errorf("%q: no error", env)
		case want < 0 && !strings.Contains(err.Error(), "COUPON_DB_MAX_OPEN"):
			t.Errorf("%q: %v, want the variable named", env, err)
		case want >= 0 && (err != nil || c.Backend.MaxOpenConns != want):
			t.Errorf("%q: %d %v, want %d", env, c.Backend.MaxOpenConns, err, want)
		}
	}
}
