package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestListSplitsAndTrims(t *testing.T) {
	assert.Equal(t, []string{"f16", "q4_0"}, list(" f16, q4_0,,"))
	assert.Nil(t, list(""))
}

func TestCheckRefusesWhatWouldTimeNothing(t *testing.T) {
	good := config{oldGgml: "a", newGgml: "b", oldSO: "c", newSO: "d", benchAB: "e", rounds: 2,
		parts: []string{"decode"}, sizes: []string{"10m"}, types: []string{"f16"}, threads: []string{"1", "2"}, ks: []string{"768"}}
	assert.NoError(t, good.check())
	for name, edit := range map[string]func(*config){
		"rounds":  func(c *config) { c.rounds = 0 },
		"part":    func(c *config) { c.parts = []string{"prompt"} },
		"size":    func(c *config) { c.sizes = []string{"7B"} },
		"threads": func(c *config) { c.threads = []string{"0"} },
		"k":       func(c *config) { c.ks = []string{"x"} },
		"types":   func(c *config) { c.types = nil },
		"binary":  func(c *config) { c.oldSO = "" },
	} {
		c := good
		edit(&c)
		assert.Error(t, c.check(), name)
	}
}
