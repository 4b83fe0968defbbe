package admin

import (
	"context"
	"couponsvc/services/core"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"couponsvc/models"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"
)

// tokenPrefix starts every API token, so that a leaked one is easy to find.
const tokenPrefix = "cps_"

// tokenCacheTTL bounds how long an instance keeps a token look-up, so that
// API calls do not read the token table each time. A revocation does not
// wait for it: a cached token is checked against its revoked marker in Redis
// at every request (docs/flows.md, "Revoke an API token").
const tokenCacheTTL = 5 * time.Second

// revokedMarkerTTL is how long a token's revoked marker stays in Redis. It
// must outlive every look-up an instance cached before the revocation
// committed (tokenCacheTTL after the commit); after it, the database, where
// the token is revoked, answers alone.
const revokedMarkerTTL = time.Hour

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
// on, with an audit entry. The token's revoked marker is written to Redis
// inside the transaction, before the commit (as a claim rule is): every
// instance checks it at each request with the token, so a look-up cached
// before the revocation is not believed after it; a marker that cannot be
// written rolls the revocation back (CodeUnavailable). A token already
// revoked is left as it is (its marker written again) and reported as a
// duplicate. Errors: CodeNotFound, CodeUnavailable.
func (s *Admin) RevokeToken(ctx context.Context, actor string, id int64) (*TokenView, bool, error) {
	var rec models.APIToken
	duplicate, marked := false, false
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&models.APIToken{}).Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", s.Clock())
		if res.Error != nil {
			return res.Error
		}
		if err := tx.First(&rec, id).Error; err != nil {
			return err
		}
		if err := s.Rdb.Set(ctx, s.Keys.RevokedToken(id), "1", revokedMarkerTTL).Err(); err != nil {
			return core.RedisError(err)
		}
		marked = true
		if res.RowsAffected == 0 {
			duplicate = true
			return nil
		}
		return s.Audit(tx, actor, "token.revoke", fmt.Sprintf("token:%d", id), fmt.Sprintf("role=%s name=%q", rec.Role, rec.Name))
	})
	s.tokens.clear()
	if err != nil {
		if marked && !duplicate {
			s.settleRevokedMarker(ctx, id)
		}
		return nil, false, core.DBError(fmt.Sprintf("token %d", id), err)
	}
	v := tokenView(rec)
	return &v, duplicate, nil
}

// settleRevokedMarker deletes the revoked marker of a revocation whose
// commit failed, unless the database shows the token revoked after all (a
// commit whose answer was lost). When the database cannot say, the marker
// stays: the token is refused until it lapses, rather than let through.
func (s *Admin) settleRevokedMarker(ctx context.Context, id int64) {
	ctx = context.WithoutCancel(ctx)
	var rec models.APIToken
	if err := s.DB.WithContext(ctx).First(&rec, id).Error; err != nil {
		s.Log.Warn("a token revocation failed and the token cannot be read: it stays refused until its marker lapses",
			"token", id, "lapses_in", revokedMarkerTTL, "err", err)
		return
	}
	if rec.RevokedAt != nil {
		return
	}
	if err := s.Rdb.Del(ctx, s.Keys.RevokedToken(id)).Err(); err != nil {
		s.Log.Warn("a token revocation failed and its marker could not be deleted: the token stays refused until it lapses",
			"token", id, "lapses_in", revokedMarkerTTL, "err", err)
	}
}

// tokenRevoked asks Redis whether token id carries a revoked marker.
func (s *Admin) tokenRevoked(ctx context.Context, id int64) (bool, error) {
	n, err := s.Hot.Exists(ctx, s.Keys.RevokedToken(id)).Result()
	if err != nil {
		return false, core.RedisError(err)
	}
	return n > 0, nil
}

// AuthenticateToken returns who holds a bearer token. A look-up cached by
// this instance is believed only while Redis shows no revoked marker for the
// token; a token read from the database is refused when it is revoked there
// or marked (a revocation committing). When Redis cannot be asked, the
// database answers alone, uncached: it is the authority, and a revocation
// cannot commit without writing its marker.
// Errors: CodeUnauthorized, CodeUnavailable (the database).
func (s *Admin) AuthenticateToken(ctx context.Context, token string) (*models.Principal, error) {
	bad := &models.Error{Code: models.CodeUnauthorized, Message: "the API token is not valid"}
	if token == "" || len(token) > 200 {
		return nil, bad
	}
	hash := hashToken(token)
	if s.bootstrapHash != "" && subtle.ConstantTimeCompare([]byte(hash), []byte(s.bootstrapHash)) == 1 {
		return &models.Principal{Name: "token:bootstrap", Role: models.RoleAdmin}, nil
	}
	redisDown := false
	if p, ok := s.tokens.get(hash); ok {
		if p == nil {
			return nil, bad
		}
		revoked, err := s.tokenRevoked(ctx, p.TokenID)
		switch {
		case err != nil:
			redisDown = true // the database answers below
		case revoked:
			s.tokens.put(hash, nil)
			return nil, bad
		default:
			return p, nil
		}
	}
	var rec models.APIToken
	err := s.DB.WithContext(ctx).Where("token_hash = ?", hash).First(&rec).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		s.tokens.put(hash, nil)
		return nil, bad
	}
	if err != nil {
		return nil, core.DBError("token", err)
	}
	if rec.RevokedAt != nil {
		s.tokens.put(hash, nil)
		return nil, bad
	}
	p := &models.Principal{Name: tokenActorPrefix + rec.Name, Role: rec.Role, TokenID: rec.ID}
	if !redisDown {
		revoked, err := s.tokenRevoked(ctx, rec.ID)
		if err == nil && revoked {
			return nil, bad // its revocation is committing
		}
		redisDown = err != nil
	}
	if !redisDown {
		s.tokens.put(hash, p)
	}
	return p, nil
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

func (c *tokenCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.items)
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
