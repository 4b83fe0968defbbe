package testsupport

import (
	"net/http/httptest"
	"testing"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/testenv"

	"github.com/gin-gonic/gin"
)

// Fixture is the one environment of the handler tests: fresh backends
// (testenv, embedded or MariaDB+Redis) and the real router over them. The
// environments of the tests (APIEnv, PageEnv, Rig, HoldAPI, ZonedEnv, and the
// checkoutAPI of handlers/api) are a fixture with the data and helpers of
// their kind.
type Fixture struct {
	*testenv.Env
	Router *gin.Engine
	// Srv serves router over HTTP (served); nil otherwise.
	Srv *httptest.Server
}

// fixtureOption changes how NewFixture builds a fixture.
type fixtureOption func(*fixtureSetup)

type fixtureSetup struct {
	cfg   services.Config
	opts  handlers.Options
	serve bool
}

// WithConfig sets the service configuration (services.Config).
func WithConfig(cfg services.Config) fixtureOption {
	return func(s *fixtureSetup) { s.cfg = cfg }
}

// WithBootstrap makes token the bootstrap admin token.
func WithBootstrap(token string) fixtureOption {
	return func(s *fixtureSetup) { s.cfg.BootstrapToken = token }
}

// withOptions sets the router's options; their logger, when set, is the
// service's too.
func withOptions(opts handlers.Options) fixtureOption {
	return func(s *fixtureSetup) { s.opts = opts }
}

// WithShopperHeader logs shoppers in by the stand-in session: the
// SessionHeader names the shopper (testShopperSession), for tests of the API
// that are not about sessions.
func WithShopperHeader() fixtureOption {
	return func(s *fixtureSetup) { s.opts.SessionPrincipal = TestShopperSession }
}

// withSessionKey gives the pages a fixed session key.
func withSessionKey() fixtureOption {
	return func(s *fixtureSetup) { s.opts.Pages.SessionKey = []byte("test session key, 32 bytes long!") }
}

// served serves the router over HTTP (Fixture.Srv), closed when the test ends.
func served() fixtureOption {
	return func(s *fixtureSetup) { s.serve = true }
}

// NewFixture returns fresh backends and the router over them.
func NewFixture(t *testing.T, options ...fixtureOption) *Fixture {
	t.Helper()
	var s fixtureSetup
	for _, o := range options {
		o(&s)
	}
	if s.opts.Logger != nil && s.cfg.Logger == nil {
		s.cfg.Logger = s.opts.Logger
	}
	env := testenv.New(t, s.cfg)
	t.Cleanup(func() { checkEvents(t, env.Backends.DB) })
	if s.opts.Logger == nil {
		s.opts.Logger = env.Config.Logger
	}
	s.opts.Middleware = append(s.opts.Middleware, CheckAnswers(t))
	f := &Fixture{Env: env, Router: handlers.NewRouter(env.Service, s.opts)}
	if s.serve {
		f.Srv = httptest.NewServer(f.Router)
		t.Cleanup(f.Srv.Close)
	}
	return f
}
