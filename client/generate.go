package client

//go:generate go run ./internal/generate
