//go:build race

package services_test

// raceDetector tells the tests that the race detector is on: the embedded
// SQLite (pure Go) then writes rows ten times slower, and the largest
// fixtures are made smaller to stay within the test timeout.
const raceDetector = true
