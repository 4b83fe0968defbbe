package handlers_test

import (
	"net/http/httptest"
	"testing"

	"couponsvc/handlers"
	"couponsvc/services"
	"couponsvc/services/testenv"

	"github.com/gin-gonic/gin"
)

// fixture is the one environment of the handler tests: fresh backends
// (testenv, embedded or MariaDB+Redis) and the real router over them. The
// environments of the tests (apiEnv, pageEnv, rig, checkoutAPI) are a fixture
// with the data and helpers of their kind.
type fixture struct {
	*testenv.Env
	router *gin.Engine
	// srv serves router over HTTP (served); nil otherwise.
	srv *httptest.Server
}

// fixtureOption changes how newFixture builds a fixture.
type fixtureOption func(*fixtureSetup)

type fixtureSetup struct {
	cfg   services.Config
	opts  handlers.Options
	serve bool
}

// withConfig sets the service configuration (services.Config).
func withConfig(cfg services.Config) fixtureOption {
	return func(s *fixtureSetup) { s.cfg = cfg }
}

// withBootstrap makes token the bootstrap admin token.
func withBootstrap(token string) fixtureOption {
	return func(s *fixtureSetup) { s.cfg.BootstrapToken = token }
}

// withOptions sets the router's options; their logger, when set, is the
// service's too.
func withOptions(opts handlers.Options) fixtureOption {
	return func(s *fixtureSetup) { s.opts = opts }
}

// withShopperHeader logs shoppers in by the stand-in session: the
// sessionHeader names the shopper (testShopperSession), for tests of the API
// that are not about sessions.
func withShopperHeader() fixtureOption {
	return func(s *fixtureSetup) { s.opts.SessionPrincipal = testShopperSession }
}

// withSessionKey gives the pages a fixed session key.
func withSessionKey() fixtureOption {
	return func(s *fixtureSetup) { s.opts.Pages.SessionKey = []byte("test session key, 32 bytes long!") }
}

// served serves the router over HTTP (fixture.srv), closed when the test ends.
func served() fixtureOption {
	return func(s *fixtureSetup) { s.serve = true }
}

// newFixture returns fresh backends and the router over them.
func newFixture(t *testing.T, options ...fixtureOption) *fixture {
	t.Helper()
	var s fixtureSetup
	for _, o := range options {
		o(&s)
	}
	if s.opts.Logger != nil && s.cfg.Logger == nil {
		s.cfg.Logger = s.opts.Logger
	}
	env := testenv.New(t, s.cfg)
	if s.opts.Logger == nil {
		s.opts.Logger = env.Config.Logger
	}
	s.opts.Middleware = append(s.opts.Middleware, checkAnswers(t))
	f := &fixture{Env: env, router: handlers.NewRouter(env.Service, s.opts)}
	if s.serve {
		f.srv = httptest.NewServer(f.router)
		t.Cleanup(f.srv.Close)
	}
	return f
}
