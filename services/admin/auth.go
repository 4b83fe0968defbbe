package admin

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"
)

// tokenPrefix starts every API token, so that a leaked one is easy to find.
const tokenPrefix = "cps_"

// tokenCacheTTL bounds how long an instance keeps a token look-up, so that
// API calls do not read the token table each time. A revocation does not
// wait for it: a cached token is checked against the instance's memory of
// revoked tokens at every request (docs/flows.md, "Revoke an API token").
const tokenCacheTTL = 5 * time.Second

// tokenActorPrefix makes a token's name its actor in the audit log and the
// jobs, columns of maxActorBytes bytes (migrations/mysql): a name of
// MaxNameRunes characters of four bytes each would not fit with the prefix.
const (
	tokenActorPrefix = "token:"
	maxActorBytes    = 400
)

// CreateToken makes an API token for role (admin, cashier or app). The token
// is returned once; only its SHA-256 hash is stored.
// Errors: CodeInvalidRequest, CodeUnavailable.
func (s *Admin) CreateToken(ctx context.Context, actor, role, name string) (string, *models.APIToken, error) {
	name = strings.TrimSpace(name)
	if err := models.ValidateRole("role", role, true); err != nil {
		return "", nil, err
	}
	if name == "" || utf8.RuneCountInString(name) > models.MaxNameRunes {
		return "", nil, models.Invalid("name", "is required (at most %d characters)", models.MaxNameRunes)
	}
	if len(tokenActorPrefix)+len(name) > maxActorBytes {
		return "", nil, models.Invalid("name", "must take at most %d bytes in UTF-8", maxActorBytes-len(tokenActorPrefix))
	}
	if err := models.CheckText("name", name, models.SingleLine); err != nil {
		return "", nil, err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", nil, fmt.Errorf("token randomness: %w", err)
	}
	token := tokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	rec := models.APIToken{Name: name, Role: role, TokenHash: hashToken(token), CreatedAt: s.Clock()}
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&rec).Error; err != nil {
			return err
		}
		return s.Audit(tx, actor, "token.create", fmt.Sprintf("token:%d", rec.ID), fmt.Sprintf("role=%s name=%q", role, name))
	})
	if err != nil {
		return "", nil, core.DBError("token", err)
	}
	return token, &rec, nil
}

// TokenView is an API token as an admin sees it: never its secret or hash.
type TokenView struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Role      string     `json:"role"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at" doc:"when it was revoked; null while it works"`
}

func tokenView(rec models.APIToken) TokenView {
	return TokenView{ID: rec.ID, Name: rec.Name, Role: rec.Role, CreatedAt: rec.CreatedAt, RevokedAt: rec.RevokedAt}
}

// ListTokens returns every API token, newest first, revoked ones included
// (the bootstrap token is configuration, not a row, and is not listed).
// Errors: CodeUnavailable.
func (s *Admin) ListTokens(ctx context.Context) ([]TokenView, error) {
	var recs []models.APIToken
	if err := s.DB.WithContext(ctx).Order("id DESC").Find(&recs).Error; err != nil {
		return nil, core.DBError("tokens", err)
	}
	out := make([]TokenView, 0, len(recs))
	for _, rec := range recs {
		out = append(out, tokenView(rec))
	}
	return out, nil
}

// RevokeToken stops a token from working on every instance from its answer
// on, with an audit entry. Once the revocation commits, this instance
// remembers it and publishes the token's id on the revocations channel,
// from which every instance adds it to its memory of revoked tokens. An
// instance that cannot follow the channel (Redis is down) refuses to revoke
// and changes nothing; a publication that fails after the commit is
// answered CodeUnavailable too, the token being revoked in the database (the
// others refuse it once their look-up lapses, tokenCacheTTL at most;
// revoking again tells them at once). A token already revoked is left as it
// is, published again, and reported as a duplicate.
// Errors: CodeNotFound, CodeUnavailable.
func (s *Admin) RevokeToken(ctx context.Context, actor string, id int64) (*TokenView, bool, error) {
	if _, err := s.revoked.state(id); err != nil {
		return nil, false, err
	}
	var rec models.APIToken
	duplicate := false
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&models.APIToken{}).Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", s.Clock())
		if res.Error != nil {
			return res.Error
		}
		if err := tx.First(&rec, id).Error; err != nil {
			return err
		}
		if res.RowsAffected == 0 {
			duplicate = true
			return nil
		}
		return s.Audit(tx, actor, "token.revoke", fmt.Sprintf("token:%d", id), fmt.Sprintf("role=%s name=%q", rec.Role, rec.Name))
	})
	if err != nil {
		return nil, false, core.DBError(fmt.Sprintf("token %d", id), err)
	}
	s.revoked.add(id)
	if err := s.Rdb.Publish(ctx, s.Keys.RevokedTokens(), strconv.FormatInt(id, 10)).Err(); err != nil {
		return nil, false, &models.Error{Code: models.CodeUnavailable, RetryAfterSeconds: 1, Err: err,
			Message: fmt.Sprintf("token %d is revoked, but the other instances could not be told at once (Redis is unavailable): "+
				"they refuse it within %s; revoke it again to tell them now", id, tokenCacheTTL)}
	}
	v := tokenView(rec)
	return &v, duplicate, nil
}

// AuthenticateToken returns who holds a bearer token. The token's look-up,
// cached by this instance for tokenCacheTTL or read from the database, is
// believed only while the instance's memory of revoked tokens does not hold
// it; while that memory cannot be sure (Redis is down, or the subscription
// is being made again) every token but the bootstrap one, which cannot be
// revoked, is refused as unavailable. It sends no Redis command.
// Errors: CodeUnauthorized, CodeUnavailable.
func (s *Admin) AuthenticateToken(ctx context.Context, token string) (*models.Principal, error) {
	if token == "" || len(token) > 200 {
		return nil, badToken()
	}
	hash := hashToken(token)
	if s.bootstrapHash != "" && subtle.ConstantTimeCompare([]byte(hash), []byte(s.bootstrapHash)) == 1 {
		return &models.Principal{Name: "token:bootstrap", Role: models.RoleAdmin}, nil
	}
	p, cached := s.tokens.get(hash)
	if !cached {
		var rec models.APIToken
		err := s.DB.WithContext(ctx).Where("token_hash = ?", hash).First(&rec).Error
		switch {
		case errors.Is(err, gorm.ErrRecordNotFound):
		case err != nil:
			return nil, core.DBError("token", err)
		case rec.RevokedAt == nil:
			p = &models.Principal{Name: tokenActorPrefix + rec.Name, Role: rec.Role, TokenID: rec.ID}
		}
		s.tokens.put(hash, p)
	}
	if p == nil {
		return nil, badToken()
	}
	revoked, err := s.revoked.state(p.TokenID)
	switch {
	case err != nil:
		return nil, err
	case revoked:
		return nil, badToken()
	}
	return p, nil
}

// badToken is the refusal of a token that is not valid, made only when one
// is refused.
func badToken() error {
	return &models.Error{Code: models.CodeUnauthorized, Message: "the API token is not valid"}
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// tokenCache remembers token lookups (nil for a refused token) for
// tokenCacheTTL, so that API calls do not read the token table each time.
type tokenCache struct {
	mu    sync.Mutex
	items map[string]cachedToken
}

type cachedToken struct {
	p       *models.Principal
	fetched time.Time
}

func (c *tokenCache) get(hash string) (*models.Principal, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[hash]
	if !ok || time.Since(it.fetched) > tokenCacheTTL {
		return nil, false
	}
	return it.p, true
}

func (c *tokenCache) put(hash string, p *models.Principal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.items) > 10000 { // a flood of bad tokens must not grow memory
		clear(c.items)
	}
	c.items[hash] = cachedToken{p: p, fetched: time.Now()}
}

// CreateUser adds a user who logs in to the pages. A shopper's username is
// their user_id, so usernames follow the user_id rules.
// Errors: CodeInvalidRequest (also for a taken username), CodeUnavailable.
func (s *Admin) CreateUser(ctx context.Context, actor, username, password, role string) (*models.User, error) {
	if err := models.ValidateUserID("username", username); err != nil {
		return nil, err
	}
	if len(password) < 8 || len(password) > 72 {
		return nil, models.Invalid("password", "must be 8 to 72 bytes")
	}
	if err := models.ValidateRole("role", role, false); err != nil {
		return nil, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.cfg.PasswordCost)
	if err != nil {
		return nil, fmt.Errorf("hash the password: %w", err)
	}
	u := models.User{Username: username, PasswordHash: string(hash), Role: role, CreatedAt: s.Clock()}
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&u).Error; err != nil {
			if name, ok := core.UniqueViolation(err); ok && name == core.UniqueUsername {
				return models.Invalid("username", "is taken")
			}
			return err
		}
		return s.Audit(tx, actor, "user.create", "user:"+username, "role="+role)
	})
	if err != nil {
		return nil, core.DBError("user", err)
	}
	return &u, nil
}

// AuthenticatePassword checks a username and password. It spends the same
// bcrypt time whether or not the user exists. Errors: CodeUnauthorized,
// CodeUnavailable.
func (s *Admin) AuthenticatePassword(ctx context.Context, username, password string) (*models.User, error) {
	var u models.User
	err := s.DB.WithContext(ctx).Where("username = ?", username).First(&u).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, core.DBError("user", err)
	}
	hash := []byte(u.PasswordHash)
	if u.ID == 0 {
		hash = s.dummyHash()
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil || u.ID == 0 {
		return nil, &models.Error{Code: models.CodeUnauthorized, Message: "wrong username or password"}
	}
	return &u, nil
}
