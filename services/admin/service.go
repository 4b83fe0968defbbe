// Package admin owns the administration of couponsvc: campaigns and
// templates (their writes and stock), users, logins and page sessions, API
// tokens, the audit log, the revocation of coupons and the demo data.
package admin

import (
	"errors"
	"sync"
	"time"

	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/events"

	"golang.org/x/crypto/bcrypt"
)

// Config tunes the administration. Zero values take the defaults of
// DefaultConfig.
type Config struct {
	// LoginsPerAccount bounds the page login attempts on one account from
	// one client address in 15 minutes (10 by default; a successful login
	// from that address clears its count); LoginsPerAddress bounds the
	// attempts from one client address a minute, whatever the account (30).
	LoginsPerAccount, LoginsPerAddress int
	// LoginSlowAfter is the number of failed logins on one account, from all
	// addresses, in 15 minutes after which every further attempt on that
	// account waits LoginSlowStep for each failure beyond it, at most
	// LoginSlowMax, before its password is checked (20, 500ms and 3s by
	// default). Failures spread over many addresses are slowed, and the
	// account's owner is never refused by them.
	LoginSlowAfter              int
	LoginSlowStep, LoginSlowMax time.Duration
	// BootstrapToken, when set, is accepted as an admin API token.
	BootstrapToken string
	// PasswordCost is the bcrypt cost of the password hashes this instance
	// makes (bcrypt.DefaultCost). A stored hash keeps the cost it was made
	// with. Tests lower it: under the race detector one hash at the default
	// cost takes seconds.
	PasswordCost int
}

// DefaultConfig returns the configuration used when nothing is set.
func DefaultConfig() Config {
	return Config{
		LoginsPerAccount: 10,
		LoginsPerAddress: 30,
		LoginSlowAfter:   20,
		LoginSlowStep:    500 * time.Millisecond,
		LoginSlowMax:     3 * time.Second,
		PasswordCost:     bcrypt.DefaultCost,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.PasswordCost < bcrypt.MinCost || c.PasswordCost > bcrypt.MaxCost {
		c.PasswordCost = d.PasswordCost
	}
	core.PositiveOr(&c.LoginsPerAccount, d.LoginsPerAccount)
	core.PositiveOr(&c.LoginsPerAddress, d.LoginsPerAddress)
	core.PositiveOr(&c.LoginSlowAfter, d.LoginSlowAfter)
	core.PositiveOr(&c.LoginSlowStep, d.LoginSlowStep)
	core.PositiveOr(&c.LoginSlowMax, d.LoginSlowMax)
	return c
}

// Admin administers the catalogue, the people and the tokens.
type Admin struct {
	*core.Core
	cfg    Config
	events *events.Events
	tokens tokenCache
	// revoked is the memory of revoked tokens every bearer request reads.
	revoked revokedTokens
	// bootstrapHash is the SHA-256 of cfg.BootstrapToken, made once here
	// rather than at every request ("" when there is none).
	bootstrapHash string
	// dummyHash is checked against when a login names no user, so that it
	// takes the time of a real check (made with cfg.PasswordCost, once).
	dummyHash func() []byte
}

// New returns the admin aggregate over c; its changes emit through ev.
func New(c *core.Core, ev *events.Events, cfg Config) *Admin {
	cfg = cfg.withDefaults()
	bootstrapHash := ""
	if cfg.BootstrapToken != "" {
		bootstrapHash = hashToken(cfg.BootstrapToken)
	}
	s := &Admin{
		Core:          c,
		cfg:           cfg,
		events:        ev,
		tokens:        tokenCache{items: map[string]cachedToken{}},
		bootstrapHash: bootstrapHash,
		dummyHash: sync.OnceValue(func() []byte {
			// withDefaults keeps the cost in range, so this cannot fail.
			h, _ := bcrypt.GenerateFromPassword([]byte("not a password of anyone"), cfg.PasswordCost)
			return h
		}),
		revoked: revokedTokens{ids: map[int64]struct{}{}, cause: errors.New("token revocations not loaded yet")},
	}
	s.startRevocations()
	return s
}
