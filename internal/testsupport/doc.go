// Package testsupport is what the tests of the router and of its packages
// (handlers, handlers/api, handlers/pages, handlers/web) and the fault suite
// share: the router over fresh backends (Fixture, over services/testenv), the
// HTTP callers of the API (APIEnv, Rig and its Req and Answer), the pages
// (PageEnv, PageClient: login, session and CSRF), the checks of an answer
// against the OpenAPI document, and the clock and data some tests set up.
//
// It is imported by tests only.
package testsupport
