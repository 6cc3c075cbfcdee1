// Package corpus holds the public-domain text the example llama models are
// trained on.
//
// opticks.txt is the beginning (about 200 KB: the advertisements and most of
// Book I) of Isaac Newton's "Opticks", fourth edition, London 1730, a work
// in the public domain, as transcribed by the Online Distributed
// Proofreading Team (pgdp.net) for Project Gutenberg; the same transcription
// ships with the Go distribution as src/testdata/Isaac.Newton-Opticks.txt.
package corpus

import _ "embed"

// Opticks is the text of opticks.txt.
//
//go:embed opticks.txt
var Opticks string
