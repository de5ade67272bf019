//go:build !race

package venue

const raceEnabled = false
