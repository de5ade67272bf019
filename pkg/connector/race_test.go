//go:build race

package connector

// raceEnabled: the race detector slows everything several times over, so
// tests of absolute timings only log them.
const raceEnabled = true
