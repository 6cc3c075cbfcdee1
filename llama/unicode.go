package llama

import (
	"sort"
	"sync"
	"unicode"
)

// Unicode classification as llama.cpp's unicode.cpp does it: every code
// point has one category flag (its general category's first letter) plus a
// whitespace flag; the tokenizers' splitting rules are written in them.

// cpFlags are the flags of a code point, with llama.cpp's bit values
// (codepoint_flags in unicode.h).
type cpFlags uint16

const (
	cpUndefined  cpFlags = 0x0001 // unassigned (Cn), or beyond U+10FFFF
	cpNumber     cpFlags = 0x0002 // \p{N}
	cpLetter     cpFlags = 0x0004 // \p{L}
	cpSeparator  cpFlags = 0x0008 // \p{Z}
	cpMark       cpFlags = 0x0010 // \p{M}
	cpPunct      cpFlags = 0x0020 // \p{P}
	cpSymbol     cpFlags = 0x0040 // \p{S}
	cpControl    cpFlags = 0x0080 // \p{C} but Cn
	cpCategories cpFlags = 0x00FF
	cpWhitespace cpFlags = 0x0100 // \s as Python's str.isspace
)

const maxCodepoint = 0x110000

// unicode151 are the code points Unicode 15.1 assigned: the reference's
// tables are of Unicode 15.1, Go's unicode package (15.0.0) does not know
// them yet.
var unicode151 = []struct {
	lo, hi rune
	f      cpFlags
}{
	{0x2FFC, 0x2FFF, cpSymbol},   // ideographic description characters
	{0x31EF, 0x31EF, cpSymbol},   // CJK stroke
	{0x2EBF0, 0x2EE5D, cpLetter}, // CJK Unified Ideographs Extension I
}

var (
	cpTableOnce sync.Once
	cpTable     []uint8 // category flags of every code point below maxCodepoint
)

// cpCategoryTable builds the category table once, from Go's range tables.
func cpCategoryTable() []uint8 {
	cpTableOnce.Do(func() {
		t := make([]uint8, maxCodepoint)
		for i := range t {
			t[i] = uint8(cpUndefined)
		}
		set := func(rt *unicode.RangeTable, f cpFlags) {
			for _, r := range rt.R16 {
				for c := uint32(r.Lo); c <= uint32(r.Hi); c += uint32(r.Stride) {
					t[c] = uint8(f)
				}
			}
			for _, r := range rt.R32 {
				for c := r.Lo; c <= r.Hi; c += r.Stride {
					t[c] = uint8(f)
				}
			}
		}
		set(unicode.N, cpNumber)
		set(unicode.L, cpLetter)
		set(unicode.Z, cpSeparator)
		set(unicode.M, cpMark)
		set(unicode.P, cpPunct)
		set(unicode.S, cpSymbol)
		set(unicode.C, cpControl) // Cc, Cf, Co, Cs: Go leaves Cn out as llama.cpp does
		for _, r := range unicode151 {
			for c := r.lo; c <= r.hi; c++ {
				t[c] = uint8(r.f)
			}
		}
		cpTable = t
	})
	return cpTable
}

// asciiFlags are the flags of the ASCII code points (the common case,
// without the table).
var asciiFlags = func() (a [128]cpFlags) {
	for c := range a {
		r := rune(c)
		switch {
		case unicode.IsNumber(r):
			a[c] = cpNumber
		case unicode.IsLetter(r):
			a[c] = cpLetter
		case unicode.IsPunct(r):
			a[c] = cpPunct
		case unicode.IsSymbol(r):
			a[c] = cpSymbol
		case r == ' ':
			a[c] = cpSeparator
		default:
			a[c] = cpControl
		}
		if isWhitespaceCp(r) {
			a[c] |= cpWhitespace
		}
	}
	return a
}()

// isWhitespaceCp is the reference's whitespace set (the code points Python's
// str.isspace accepts; Go's unicode.IsSpace has the same set).
func isWhitespaceCp(c rune) bool {
	switch c {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return c >= 0x2000 && c <= 0x200A
}

// flagsOf returns the flags of code point c.
func flagsOf(c rune) cpFlags {
	if c >= 0 && c < 128 {
		return asciiFlags[c]
	}
	if c < 0 || c >= maxCodepoint {
		return cpUndefined
	}
	f := cpFlags(cpCategoryTable()[c])
	if isWhitespaceCp(c) {
		f |= cpWhitespace
	}
	return f
}

// cpLower is the reference's unicode_tolower (its map is Go's simple case
// mapping).
func cpLower(c rune) rune {
	if c < 0 || c >= maxCodepoint {
		return c
	}
	return unicode.ToLower(c)
}

// cpNFD maps c to the first code point of its canonical decomposition, as
// llama.cpp's unicode_cpts_normalize_nfd does.
func cpNFD(c rune) rune {
	n := len(nfdRanges) / 3
	// the last range whose first code point is <= c
	i := sort.Search(n, func(i int) bool { return nfdRanges[3*i] > c }) - 1
	if i >= 0 && c <= nfdRanges[3*i+1] {
		return nfdRanges[3*i+2]
	}
	return c
}

// decodeCp decodes the code point at s[i:] as llama.cpp's
// unicode_cpt_from_utf8 does (it does not check for overlong forms or
// surrogates). Where llama.cpp throws (a stray or truncated byte), and for the
// sequences whose code point it would write back as other bytes (overlong
// forms, beyond U+10FFFF), ok is false and the byte counts alone, as U+FFFD:
// llama.cpp 1.3.3 aborts the tokenization there, later versions read U+FFFD.
func decodeCp(s string, i int) (c rune, n int, ok bool) {
	b0 := s[i]
	cont := func(k int) bool { return i+k < len(s) && s[i+k]&0xC0 == 0x80 }
	switch {
	case b0 < 0x80:
		return rune(b0), 1, true
	case b0&0x40 == 0:
		return 0xFFFD, 1, false
	case b0&0x20 == 0:
		if cont(1) {
			c = rune(b0&0x1F)<<6 | rune(s[i+1]&0x3F)
			if c >= 0x80 {
				return c, 2, true
			}
		}
	case b0&0x10 == 0:
		if cont(1) && cont(2) {
			c = rune(b0&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F)
			if c >= 0x800 {
				return c, 3, true
			}
		}
	case b0&0x08 == 0:
		if cont(1) && cont(2) && cont(3) {
			c = rune(b0&0x07)<<18 | rune(s[i+1]&0x3F)<<12 | rune(s[i+2]&0x3F)<<6 | rune(s[i+3]&0x3F)
			if c >= 0x10000 && c < maxCodepoint {
				return c, 4, true
			}
		}
	}
	return 0xFFFD, 1, false
}
