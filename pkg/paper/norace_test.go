//go:build !race

package paper

const raceEnabled = false
