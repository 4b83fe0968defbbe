// Package handlers is couponsvc's HTTP layer on Gin: it wires the JSON API
// (package api, see docs/result-codes.md) and the server-rendered pages
// (package pages) into one router, from their route tables, and serves the
// OpenAPI document made from the same rows. Handlers bind and validate a
// request, call one service method and render; they never touch GORM,
// go-redis or redislock.
package handlers
