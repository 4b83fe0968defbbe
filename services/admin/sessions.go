package admin

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

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// SessionTTL is how long a page session lasts after login: a working day and
// then some. The session cookie carries only a random session id; the session
// itself lives in Redis, so that logging out ends it everywhere at once, even
// for a copy of the cookie.
const SessionTTL = 12 * time.Hour

// Login attempts are limited in three ways, in Redis shared by every
// instance:
//
//   - per client address (an IPv4 address or an IPv6 /64):
//     Config.LoginsPerAddress attempts a minute, whatever the account
//     (GCRA), so that one address cannot try many accounts quickly;
//   - per account and address: Config.LoginsPerAccount attempts in 15
//     minutes (GCRA, one back every 15 minutes / the limit); a successful
//     login from that address clears the count. An address that guesses is
//     locked out of that account, and no one else is;
//   - per account, from all addresses: failures are counted in a window of
//     15 minutes from the first; beyond Config.LoginSlowAfter, each attempt
//     on the account waits LoginSlowStep per failure beyond, at most
//     LoginSlowMax, before the password is checked. Guesses spread over many
//     addresses slow down; the owner is at most LoginSlowMax late, never
//     locked out.
func (s *Admin) loginLimits() (perAccountAddr, perAddress redis_rate.Limit) {
	a, b := s.cfg.LoginsPerAccount, s.cfg.LoginsPerAddress
	return redis_rate.Limit{Rate: a, Burst: a, Period: loginWindow},
		redis_rate.Limit{Rate: b, Burst: b, Period: time.Minute}
}

// loginWindow is the period of the per-account limits of logins.
const loginWindow = 15 * time.Minute

// countFailure adds a failed login to a counter that lives loginWindow from
// its first failure, and returns the count.
var countFailure = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`)

// loginDelay is how long an attempt on an account with failures failed logins
// in the window waits before its password is checked.
func (s *Admin) loginDelay(failures int64) time.Duration {
	beyond := failures - int64(s.cfg.LoginSlowAfter)
	if beyond <= 0 {
		return 0
	}
	return min(s.cfg.LoginSlowMax, time.Duration(beyond)*s.cfg.LoginSlowStep)
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
func (s *Admin) Login(ctx context.Context, req LoginRequest) (string, *models.User, error) {
	limiter := redis_rate.NewLimiter(s.Rdb)
	perAccountAddr, perAddress := s.loginLimits()
	// The account is the username byte for byte, as the users table compares
	// it: a look-alike spelling is another account and spends none of this
	// one's attempts.
	user := hashToken(req.Username)
	addr := hashToken(core.AddrKey(req.Addr))
	account := s.Keys.Prefix + "login:fail:" + user
	pair := s.Keys.Prefix + "login:pair:" + user + ":" + addr
	address := s.Keys.Prefix + "login:addr:" + addr
	for _, l := range []struct {
		key   string
		limit redis_rate.Limit
	}{{address, perAddress}, {pair, perAccountAddr}} {
		res, err := limiter.Allow(ctx, l.key, l.limit)
		if err != nil {
			return "", nil, core.RedisError(err)
		}
		if res.Allowed == 0 {
			wait := int(math.Ceil(res.RetryAfter.Seconds()))
			return "", nil, &models.Error{Code: models.CodeRateLimited, RetryAfterSeconds: max(wait, 1),
				Message: "too many login attempts; try again later"}
		}
	}
	failures, err := s.Rdb.Get(ctx, account).Int64()
	if err != nil && !core.IsRedisNil(err) {
		return "", nil, core.RedisError(err)
	}
	if d := s.loginDelay(failures); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return "", nil, models.Unavailable("login", ctx.Err())
		}
	}
	u, err := s.AuthenticatePassword(ctx, req.Username, req.Password)
	if models.IsCode(err, models.CodeUnauthorized) {
		if cerr := countFailure.Run(ctx, s.Rdb, []string{account}, loginWindow.Milliseconds()).Err(); cerr != nil {
			return "", nil, core.RedisError(cerr)
		}
	}
	if err != nil {
		return "", nil, err
	}
	if err := limiter.Reset(ctx, pair); err != nil {
		s.Log.Warn("reset the login limit of an account at an address", "err", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", nil, fmt.Errorf("session randomness: %w", err)
	}
	sid := base64.RawURLEncoding.EncodeToString(raw[:])
	body, err := json.Marshal(Session{Username: u.Username, Role: u.Role, CreatedAt: s.Clock()})
	if err != nil {
		return "", nil, err
	}
	if err := s.Rdb.Set(ctx, s.sessionKey(sid), body, SessionTTL).Err(); err != nil {
		return "", nil, core.RedisError(err)
	}
	return sid, u, nil
}

// LookupSession returns the live session with that id, or nil when there is
// none (logged out, expired, or never started). Errors: CodeUnavailable.
func (s *Admin) LookupSession(ctx context.Context, sid string) (*Session, error) {
	if sid == "" || len(sid) > 100 {
		return nil, nil
	}
	body, err := s.Rdb.Get(ctx, s.sessionKey(sid)).Bytes()
	if core.IsRedisNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, core.RedisError(err)
	}
	var sess Session
	if err := json.Unmarshal(body, &sess); err != nil {
		return nil, nil // not ours: treat as logged out
	}
	return &sess, nil
}

// Logout ends a session. Ending one that does not exist is not an error.
// Errors: CodeUnavailable.
func (s *Admin) Logout(ctx context.Context, sid string) error {
	if sid == "" || len(sid) > 100 {
		return nil
	}
	return core.RedisError(s.Rdb.Del(ctx, s.sessionKey(sid)).Err())
}

// pageSecretName names the generated page cookie key in the settings table.
const pageSecretName = "session_key"

// PageSecret returns the key of the page cookies for a deployment that sets
// none: made by the first instance that asks and kept in the database, so that
// every instance signs with the same key and logins survive restarts.
// Errors: CodeUnavailable.
func (s *Admin) PageSecret(ctx context.Context) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		var values []string
		err := s.DB.WithContext(ctx).Raw("SELECT value FROM settings WHERE name = ?", pageSecretName).Scan(&values).Error
		if err != nil {
			return nil, core.DBError("settings", err)
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
		err = s.DB.WithContext(ctx).Exec("INSERT INTO settings (name, value, created_at) VALUES (?, ?, ?)",
			pageSecretName, hex.EncodeToString(key), s.Clock()).Error
		if err == nil {
			return key, nil
		}
		if _, dup := core.UniqueViolation(err); !dup || attempt > 0 {
			return nil, core.DBError("settings", err)
		}
		// Another instance made it first: use theirs.
	}
}

// sessionKey names a session's Redis key by a hash of its id, so that reading
// Redis does not give out usable cookies.
func (s *Admin) sessionKey(sid string) string {
	sum := sha256.Sum256([]byte(sid))
	return s.Keys.Prefix + "session:" + hex.EncodeToString(sum[:])
}
