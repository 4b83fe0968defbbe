package client

//go:generate go run ../cmd/clientgen
