package llama

// A small backtracking matcher with the semantics of ECMAScript regular
// expressions (std::regex, which llama.cpp uses for the pre-tokenizers it
// has no hand-written scanner for): alternatives are tried in order and the
// first that lets the rest match wins; quantifiers are greedy and give back
// one unit at a time; lookahead is supported. Patterns are built once, as Go
// values (no parsing), over units: code points, or the one-byte "collapsed"
// classes llama.cpp substitutes for them (see collapseUnit).

// reNode matches at in[pos:] and calls k with the end of each way it can
// match, best first, until k accepts one.
type reNode interface {
	match(in []int32, pos int, k func(int) bool) bool
}

// reClass is one unit of a class.
type reClass func(u int32) bool

func (c reClass) match(in []int32, pos int, k func(int) bool) bool {
	return pos < len(in) && c(in[pos]) && k(pos+1)
}

// reRep is a greedy repetition of a class, min to max times (max < 0: no
// limit).
type reRep struct {
	c        reClass
	min, max int
}

func (r reRep) match(in []int32, pos int, k func(int) bool) bool {
	n := 0
	for pos+n < len(in) && (r.max < 0 || n < r.max) && r.c(in[pos+n]) {
		n++
	}
	for ; n >= r.min; n-- {
		if k(pos + n) {
			return true
		}
	}
	return false
}

// reSeq matches its parts one after the other.
type reSeq []reNode

func (s reSeq) match(in []int32, pos int, k func(int) bool) bool { return s.from(0, in, pos, k) }

func (s reSeq) from(i int, in []int32, pos int, k func(int) bool) bool {
	if i == len(s) {
		return k(pos)
	}
	return s[i].match(in, pos, func(p int) bool { return s.from(i+1, in, p, k) })
}

// reAlt tries its alternatives in order.
type reAlt []reNode

func (a reAlt) match(in []int32, pos int, k func(int) bool) bool {
	for _, n := range a {
		if n.match(in, pos, k) {
			return true
		}
	}
	return false
}

// reNotAhead is the negative lookahead (?!class).
type reNotAhead reClass

func (c reNotAhead) match(in []int32, pos int, k func(int) bool) bool {
	if pos < len(in) && c(in[pos]) {
		return false
	}
	return k(pos)
}

// reEnd is $ (the end of the input: no multiline mode).
type reEnd struct{}

func (reEnd) match(in []int32, pos int, k func(int) bool) bool { return pos == len(in) && k(pos) }

// Constructors, named for the regex syntax they stand for.
func reOne(c reClass) reNode  { return c }
func reOpt(c reClass) reNode  { return reRep{c, 0, 1} }
func reStar(c reClass) reNode { return reRep{c, 0, -1} }
func rePlus(c reClass) reNode { return reRep{c, 1, -1} }
func reLit(s string) reNode {
	var q reSeq
	for _, r := range s {
		q = append(q, reOne(reIs(r)))
	}
	return q
}

// reIs is the class of the units given.
func reIs(units ...rune) reClass {
	return func(u int32) bool {
		for _, x := range units {
			if u == x {
				return true
			}
		}
		return false
	}
}

// reRanges is the class of the inclusive ranges lo, hi, lo, hi, ...
func reRanges(r ...rune) reClass {
	return func(u int32) bool {
		for i := 0; i+1 < len(r); i += 2 {
			if u >= r[i] && u <= r[i+1] {
				return true
			}
		}
		return false
	}
}

func reOr(cs ...reClass) reClass {
	return func(u int32) bool {
		for _, c := range cs {
			if c(u) {
				return true
			}
		}
		return false
	}
}

func reNot(c reClass) reClass { return func(u int32) bool { return !c(u) } }

// reFind returns the leftmost match at or after pos, as std::regex_search:
// [start, end), or ok false.
func reFind(n reNode, in []int32, pos int) (start, end int, ok bool) {
	e := -1
	accept := func(p int) bool { e = p; return true }
	for ; pos < len(in); pos++ {
		if n.match(in, pos, accept) {
			return pos, e, true
		}
	}
	return 0, 0, false
}
