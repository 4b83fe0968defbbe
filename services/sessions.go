package services

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"couponsvc/models"

	"github.com/go-redis/redis_rate/v10"
)

// SessionTTL is how long a page session lasts after login: a working day and
// then some. The session cookie carries only a random session id; the session
// itself lives in Redis, so that logging out ends it everywhere at once, even
// for a copy of the cookie.
const SessionTTL = 12 * time.Hour

// Login attempts are limited per account (Config.LoginsPerAccount in 15
// minutes) and per client address (Config.LoginsPerAddress a minute), with
// GCRA in Redis shared by every instance. A successful login clears the
// account's count; the address count keeps every attempt, so that one address
// cannot try many accounts quickly.
func (s *Service) loginLimits() (perAccount, perAddress redis_rate.Limit) {
	a, b := s.cfg.LoginsPerAccount, s.cfg.LoginsPerAddress
	return redis_rate.Limit{Rate: a, Burst: a, Period: 15 * time.Minute},
		redis_rate.Limit{Rate: b, Burst: b, Period: time.Minute}
}

// Session is a logged-in user's page session.
type Session struct {
	Username  string    `json:"username"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
}

// Principal returns who acts in this session; a shopper acts as the user_id
// that is their username.
func (s *Session) Principal() *models.Principal {
	p := &models.Principal{Name: s.Username, Role: s.Role}
	if s.Role == models.RoleShopper {
		p.UserID = s.Username
	}
	return p
}

// LoginRequest is a login attempt from the login page.
type LoginRequest struct {
	Username string
	Password string
	// Addr is the client's address, for the per-address limit.
	Addr string
}

// Login checks the login limits and the password, then starts a session and
// returns its id (to be kept in the signed session cookie) and the user.
// Errors: CodeRateLimited (with RetryAfterSeconds), CodeUnauthorized,
// CodeUnavailable.
func (s *Service) Login(ctx context.Context, req LoginRequest) (string, *models.User, error) {
	limiter := redis_rate.NewLimiter(s.rdb)
	loginPerAccount, loginPerAddress := s.loginLimits()
	// The account is the username byte for byte, as the users table compares
	// it: a look-alike spelling is another account and spends none of this
	// one's attempts.
	account := s.keys.prefix + "login:user:" + hashToken(req.Username)
	address := s.keys.prefix + "login:addr:" + hashToken(req.Addr)
	for _, l := range []struct {
		key   string
		limit redis_rate.Limit
	}{{address, loginPerAddress}, {account, loginPerAccount}} {
		res, err := limiter.Allow(ctx, l.key, l.limit)
		if err != nil {
			return "", nil, redisError(err)
		}
		if res.Allowed == 0 {
			wait := int(math.Ceil(res.RetryAfter.Seconds()))
			return "", nil, &models.Error{Code: models.CodeRateLimited, RetryAfterSeconds: max(wait, 1),
				Message: "too many login attempts; try again later"}
		}
	}
	u, err := s.AuthenticatePassword(ctx, req.Username, req.Password)
	if err != nil {
		return "", nil, err
	}
	if err := limiter.Reset(ctx, account); err != nil {
		s.log.Warn("reset the login limit of an account", "err", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", nil, fmt.Errorf("session randomness: %w", err)
	}
	sid := base64.RawURLEncoding.EncodeToString(raw[:])
	body, err := json.Marshal(Session{Username: u.Username, Role: u.Role, CreatedAt: s.now()})
	if err != nil {
		return "", nil, err
	}
	if err := s.rdb.Set(ctx, s.sessionKey(sid), body, SessionTTL).Err(); err != nil {
		return "", nil, redisError(err)
	}
	return sid, u, nil
}

// LookupSession returns the live session with that id, or nil when there is
// none (logged out, expired, or never started). Errors: CodeUnavailable.
func (s *Service) LookupSession(ctx context.Context, sid string) (*Session, error) {
	if sid == "" || len(sid) > 100 {
		return nil, nil
	}
	body, err := s.rdb.Get(ctx, s.sessionKey(sid)).Bytes()
	if isRedisNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, redisError(err)
	}
	var sess Session
	if err := json.Unmarshal(body, &sess); err != nil {
		return nil, nil // not ours: treat as logged out
	}
	return &sess, nil
}

// Logout ends a session. Ending one that does not exist is not an error.
// Errors: CodeUnavailable.
func (s *Service) Logout(ctx context.Context, sid string) error {
	if sid == "" || len(sid) > 100 {
		return nil
	}
	return redisError(s.rdb.Del(ctx, s.sessionKey(sid)).Err())
}

// pageSecretName names the generated page cookie key in the settings table.
const pageSecretName = "session_key"

// PageSecret returns the key of the page cookies for a deployment that sets
// none: made by the first instance that asks and kept in the database, so that
// every instance signs with the same key and logins survive restarts.
// Errors: CodeUnavailable.
func (s *Service) PageSecret(ctx context.Context) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		var values []string
		err := s.db.WithContext(ctx).Raw("SELECT value FROM settings WHERE name = ?", pageSecretName).Scan(&values).Error
		if err != nil {
			return nil, dbError("settings", err)
		}
		if len(values) > 0 {
			key, err := hex.DecodeString(values[0])
			if err != nil || len(key) < 32 {
				return nil, fmt.Errorf("the setting %s is damaged: delete its row to make a new key (everyone is then logged out)", pageSecretName)
			}
			return key, nil
		}
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		err = s.db.WithContext(ctx).Exec("INSERT INTO settings (name, value, created_at) VALUES (?, ?, ?)",
			pageSecretName, hex.EncodeToString(key), s.now()).Error
		if err == nil {
			return key, nil
		}
		if _, dup := uniqueViolation(err); !dup || attempt > 0 {
			return nil, dbError("settings", err)
		}
		// Another instance made it first: use theirs.
	}
}

// sessionKey names a session's Redis key by a hash of its id, so that reading
// Redis does not give out usable cookies.
func (s *Service) sessionKey(sid string) string {
	sum := sha256.Sum256([]byte(sid))
	return s.keys.prefix + "session:" + hex.EncodeToString(sum[:])
}
