package llama

// heap is a binary heap ordered by less (the least element on top).
type heap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h *heap[T]) len() int { return len(h.items) }

// init orders items as a heap.
func (h *heap[T]) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *heap[T]) push(x T) {
	h.items = append(h.items, x)
	for i := len(h.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *heap[T]) pop() T {
	top := h.items[0]
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	h.items = h.items[:n]
	h.down(0)
	return top
}

// down moves item i toward the leaves until the heap order holds.
func (h *heap[T]) down(i int) {
	n := len(h.items)
	for {
		l, m := 2*i+1, i
		if l < n && h.less(h.items[l], h.items[m]) {
			m = l
		}
		if r := l + 1; r < n && h.less(h.items[r], h.items[m]) {
			m = r
		}
		if m == i {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}
