//go:build !race

package services_test

// raceDetector: see race_on_test.go.
const raceDetector = false
