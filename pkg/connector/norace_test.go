//go:build !race

package connector

const raceEnabled = false
