package llama

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// mixtureTypes runs mixture name's rules over the matrices of an nLayer
// llama model (rows of 4096, in the order llama.cpp's files hold them) and
// returns the type of each.
func mixtureTypes(t *testing.T, name string, nLayer, nGQA int, imatrix bool) map[string]ggml.Type {
	t.Helper()
	m, ok := ParseMixture(name)
	if !ok {
		t.Fatalf("ParseMixture(%q) failed", name)
	}
	q := &mixState{m: m, hasOutput: true, imatrix: imatrix, nGQA: nGQA,
		nAttnV: nLayer, nFFNDown: nLayer, nFFNGate: nLayer, nFFNUp: nLayer}
	names := []string{"token_embd.weight"}
	for i := range nLayer {
		for _, s := range []string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_down", "ffn_up"} {
			names = append(names, fmt.Sprintf("blk.%d.%s.weight", i, s))
		}
	}
	names = append(names, "output.weight")
	types := map[string]ggml.Type{}
	for _, n := range names {
		types[n] = q.rules(n, 4096)
	}
	return types
}

// llama.cpp's names mean llama.cpp's mixtures (llama_tensor_get_type
// of late 2024, llama models without experts): base type, more bits for
// the output matrix and for some attn_v/ffn_down layers.
func TestMixtureRulesAreLlamaCpps(t *testing.T) {
	const (
		q2, q3, q4, q5, q6, q8 = ggml.TypeQ2_K, ggml.TypeQ3_K, ggml.TypeQ4_K, ggml.TypeQ5_K, ggml.TypeQ6_K, ggml.TypeQ8_0
	)
	// use_more_bits for 32 layers: the first and last 4, and every third between
	more := map[int]bool{0: true, 1: true, 2: true, 3: true, 6: true, 9: true, 12: true, 15: true, 18: true,
		21: true, 24: true, 27: true, 28: true, 29: true, 30: true, 31: true}
	pick := func(cond bool, yes, no ggml.Type) ggml.Type {
		if cond {
			return yes
		}
		return no
	}
	type want struct {
		output, embd, other, attnOut ggml.Type
		attnV, ffnDown               func(i int) ggml.Type
	}
	same := func(t ggml.Type) func(int) ggml.Type { return func(int) ggml.Type { return t } }
	for _, c := range []struct {
		name    string
		gqa     int
		imatrix bool
		want    want
	}{
		{"Q4_K_M", 1, false, want{q6, q4, q4, q4, func(i int) ggml.Type { return pick(more[i], q6, q4) }, func(i int) ggml.Type { return pick(more[i], q6, q4) }}},
		{"q4_k", 1, false, want{q6, q4, q4, q4, func(i int) ggml.Type { return pick(more[i], q6, q4) }, func(i int) ggml.Type { return pick(more[i], q6, q4) }}},
		{"Q4_K_S", 1, false, want{q6, q4, q4, q4, func(i int) ggml.Type { return pick(i < 4, q5, q4) }, func(i int) ggml.Type { return pick(i < 4, q5, q4) }}},
		{"Q5_K_M", 1, false, want{q6, q5, q5, q5, func(i int) ggml.Type { return pick(more[i], q6, q5) }, func(i int) ggml.Type { return pick(more[i], q6, q5) }}},
		{"Q5_K_S", 1, false, want{q6, q5, q5, q5, same(q5), same(q5)}},
		{"Q6_K", 1, false, want{q6, q6, q6, q6, same(q6), same(q6)}},
		{"Q8_0", 1, false, want{q8, q8, q8, q8, same(q8), same(q8)}},
		{"Q4_0", 1, false, want{q6, ggml.TypeQ4_0, ggml.TypeQ4_0, ggml.TypeQ4_0, same(ggml.TypeQ4_0), same(ggml.TypeQ4_0)}},
		{"Q4_0", 1, true, want{q6, ggml.TypeQ4_0, ggml.TypeQ4_0, ggml.TypeQ4_0, same(ggml.TypeQ4_0),
			func(i int) ggml.Type { return pick(i < 4, ggml.TypeQ4_1, ggml.TypeQ4_0) }}},
		{"Q3_K_S", 1, false, want{q6, q3, q3, q3, same(q3), same(q3)}},
		{"Q3_K_M", 1, false, want{q6, q3, q3, q4, func(i int) ggml.Type { return pick(i < 2, q5, q4) }, func(i int) ggml.Type { return pick(i < 2, q5, q4) }}},
		{"Q3_K_L", 1, false, want{q6, q3, q3, q5, same(q5), same(q5)}},
		{"Q2_K", 1, false, want{q6, q2, q2, q3, same(q3), same(q3)}},
		{"Q2_K", 4, false, want{q6, q2, q2, q3, same(q4), same(q3)}},
		{"Q2_K_S", 1, false, want{q6, q2, q2, q2, same(q2), func(i int) ggml.Type { return pick(i < 4, q4, q2) }}},
		{"IQ2_XS", 1, true, want{q5, q2, ggml.TypeIQ2_XS, ggml.TypeIQ2_XS, same(q2), func(i int) ggml.Type { return pick(i < 4, q2, ggml.TypeIQ2_XS) }}},
		{"IQ4_NL", 4, false, want{q6, ggml.TypeIQ4_NL, ggml.TypeIQ4_NL, ggml.TypeIQ4_NL, same(q5),
			func(i int) ggml.Type { return pick(i < 4, q5, ggml.TypeIQ4_NL) }}},
	} {
		got := mixtureTypes(t, c.name, 32, c.gqa, c.imatrix)
		label := fmt.Sprintf("%s (gqa %d, imatrix %v)", c.name, c.gqa, c.imatrix)
		check := func(name string, want ggml.Type) {
			if got[name] != want {
				t.Errorf("%s: %s is %s, want %s", label, name, got[name], want)
			}
		}
		check("output.weight", c.want.output)
		check("token_embd.weight", c.want.embd)
		for i := range 32 {
			blk := fmt.Sprintf("blk.%d.", i)
			check(blk+"attn_q.weight", c.want.other)
			check(blk+"ffn_up.weight", c.want.other)
			check(blk+"attn_output.weight", c.want.attnOut)
			check(blk+"attn_v.weight", c.want.attnV(i))
			check(blk+"ffn_down.weight", c.want.ffnDown(i))
		}
	}
	// half of the attn_v and ffn_down matrices get q6_K in Q4_K_M
	n := 0
	for name, typ := range mixtureTypes(t, "Q4_K_M", 32, 1, false) {
		if typ == q6 && name != "output.weight" {
			n++
		}
	}
	if n != 32 {
		t.Errorf("Q4_K_M: %d of the 64 attn_v and ffn_down matrices are q6_K, want 32", n)
	}
	// rows that are not whole k-blocks: the output matrix gets q8_0
	m, _ := ParseMixture("Q4_K_M")
	if typ := (&mixState{m: m, hasOutput: true, nGQA: 1}).rules("output.weight", 100); typ != q8 {
		t.Errorf("output rows of 100: %s, want q8_0", typ)
	}
	if _, ok := ParseMixture("Q4_K_X"); ok {
		t.Error("Q4_K_X parsed")
	}
}

func tensorTypes(t *testing.T, path string) (map[string]ggml.Type, uint32) {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	types := map[string]ggml.Type{}
	for _, info := range f.Tensors() {
		types[info.Name] = ggml.Type(info.Type)
	}
	ft, err := f.Uint32("general.file_type")
	if err != nil {
		t.Fatal(err)
	}
	return types, ft
}

// QuantizeFile applies a mixture to a model file, reports the
// types, size and bits per weight, and refuses to requantize unless asked.
func TestQuantizeFileMixtureAndRequantize(t *testing.T) {
	// 8 layers: use_more_bits picks layers 0, 3, 6 and 7
	path := smallModel(t, Hparams{NEmbd: 256, NLayer: 8, NHead: 2, NFF: 256, NCtxTrain: 32}, false)
	dir := t.TempDir()
	m, _ := ParseMixture("Q4_K_M")
	out := filepath.Join(dir, "q4km.gguf")
	st, err := QuantizeFile(path, out, QuantizeOptions{Mixture: m, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	types, ft := tensorTypes(t, out)
	if ft != 15 {
		t.Errorf("general.file_type %d, want 15 (Q4_K_M)", ft)
	}
	want := map[string]ggml.Type{"output.weight": ggml.TypeQ6_K, "token_embd.weight": ggml.TypeQ4_K, "output_norm.weight": ggml.TypeF32}
	for i := range 8 {
		v := ggml.TypeQ4_K
		if i == 0 || i == 3 || i == 6 || i == 7 {
			v = ggml.TypeQ6_K
		}
		want[fmt.Sprintf("blk.%d.attn_v.weight", i)] = v
		want[fmt.Sprintf("blk.%d.ffn_down.weight", i)] = v
		want[fmt.Sprintf("blk.%d.attn_q.weight", i)] = ggml.TypeQ4_K
		want[fmt.Sprintf("blk.%d.ffn_gate.weight", i)] = ggml.TypeQ4_K
	}
	for name, typ := range want {
		if types[name] != typ {
			t.Errorf("%s: %s, want %s", name, types[name], typ)
		}
	}
	if st.Fallbacks != 0 || st.Types[ggml.TypeQ6_K] != 9 || st.Types[ggml.TypeQ4_K] != 1+8*7-8 {
		t.Errorf("stats %+v", st)
	}
	if bpw := st.BitsPerWeight(); bpw < 4.5 || bpw > 6 {
		t.Errorf("%.2f bits per weight", bpw)
	}

	// already quantized: refused, unless allowed
	again := filepath.Join(dir, "again.gguf")
	if _, err := QuantizeFile(out, again, QuantizeOptions{Type: ggml.TypeQ8_0}); !errors.Is(err, ErrRequantize) {
		t.Errorf("requantizing: %v", err)
	}
	if _, err := QuantizeFile(out, again, QuantizeOptions{Type: ggml.TypeQ8_0, AllowRequantize: true}); err != nil {
		t.Error(err)
	}

	// without an output matrix, token_embd is the output and gets its type
	tied := smallModel(t, Hparams{NEmbd: 256, NLayer: 1, NHead: 2, NFF: 256, NCtxTrain: 32}, true)
	if _, err := QuantizeFile(tied, out, QuantizeOptions{Mixture: m}); err != nil {
		t.Fatal(err)
	}
	if types, _ := tensorTypes(t, out); types["token_embd.weight"] != ggml.TypeQ6_K {
		t.Errorf("tied token_embd: %s, want q6_K", types["token_embd.weight"])
	}
	// a mixture that is not llama.cpp's
	if _, err := QuantizeFile(path, out, QuantizeOptions{Mixture: Mixture{Name: "Q4_K_M", Base: ggml.TypeQ8_0}}); err == nil {
		t.Error("a made-up mixture: no error")
	}
}

// The mixtures on phi3's fused matrices and starcoder2's biased layers, as
// llama.cpp's quantize gives them: attn_qkv has a rule of its own (and
// counts as an attn_v matrix), the fused ffn_up is an ffn_up, and the
// biases are not matrices the layer rules number.
func TestMixtureFusedAndBiasedLayers(t *testing.T) {
	const nLayer, row = 4, 256
	write := func(arch string, layerTensors []string) string {
		path := filepath.Join(t.TempDir(), arch+".gguf")
		w, err := gguf.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		for _, kv := range []struct {
			key string
			v   uint32
		}{{"block_count", nLayer}, {"attention.head_count", 4}, {"attention.head_count_kv", 4}} {
			if err := w.SetUint32(arch+"."+kv.key, kv.v); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.SetString("general.architecture", arch); err != nil {
			t.Fatal(err)
		}
		add := func(name string) {
			shape := []int64{row, 2}
			if !strings.HasSuffix(name, ".weight") || strings.Contains(name, "norm") {
				shape = []int64{row}
			}
			n := int64(1)
			for _, d := range shape {
				n *= d
			}
			data := make([]float32, n)
			for i := range data {
				data[i] = float32(i%7) - 3
			}
			if err := w.AddTensor(name, gguf.TensorF32, shape, data); err != nil {
				t.Fatal(err)
			}
		}
		add("token_embd.weight")
		for i := range nLayer {
			for _, s := range layerTensors {
				add(fmt.Sprintf("blk.%d.%s", i, s))
			}
		}
		add("output_norm.weight")
		add("output.weight")
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	quantize := func(in, mixture string) map[string]ggml.Type {
		m, ok := ParseMixture(mixture)
		if !ok {
			t.Fatalf("mixture %s", mixture)
		}
		out := filepath.Join(t.TempDir(), mixture+".gguf")
		if _, err := QuantizeFile(in, out, QuantizeOptions{Mixture: m, Threads: 1}); err != nil {
			t.Fatal(err)
		}
		types, _ := tensorTypes(t, out)
		return types
	}
	const q4, q5, q6 = ggml.TypeQ4_K, ggml.TypeQ5_K, ggml.TypeQ6_K
	check := func(label string, got map[string]ggml.Type, want map[string]ggml.Type) {
		t.Helper()
		for name, typ := range want {
			if got[name] != typ {
				t.Errorf("%s: %s is %s, want %s", label, name, got[name], typ)
			}
		}
	}

	phi3 := write("phi3", []string{"attn_norm.weight", "attn_qkv.weight", "attn_output.weight", "ffn_norm.weight", "ffn_up.weight", "ffn_down.weight"})
	for _, c := range []struct {
		mixture string
		qkv     ggml.Type
	}{{"Q3_K_M", q4}, {"Q3_K_L", q4}, {"Q4_K_M", q5}, {"Q5_K_M", q6}, {"Q4_K_S", q4}, {"Q6_K", q6}} {
		got := quantize(phi3, c.mixture)
		for i := range nLayer {
			check("phi3 "+c.mixture, got, map[string]ggml.Type{fmt.Sprintf("blk.%d.attn_qkv.weight", i): c.qkv, fmt.Sprintf("blk.%d.attn_norm.weight", i): ggml.TypeF32})
		}
	}
	// use_more_bits of 4 layers: 0 (the first eighth is none), 2 and 3 (the last eighth, every third)
	got := quantize(phi3, "Q4_K_M")
	check("phi3 Q4_K_M", got, map[string]ggml.Type{"blk.0.ffn_up.weight": q4, "blk.3.ffn_up.weight": q4,
		"blk.0.ffn_down.weight": q4, "blk.1.ffn_down.weight": q4, "blk.2.ffn_down.weight": q6, "blk.3.ffn_down.weight": q6,
		"output.weight": q6, "token_embd.weight": q4})

	// starcoder2: with its biases the layers still number 4
	sc := write("starcoder2", []string{"attn_norm.weight", "attn_norm.bias", "attn_q.weight", "attn_q.bias", "attn_k.weight", "attn_k.bias",
		"attn_v.weight", "attn_v.bias", "attn_output.weight", "attn_output.bias", "ffn_norm.weight", "ffn_norm.bias",
		"ffn_up.weight", "ffn_up.bias", "ffn_down.weight", "ffn_down.bias"})
	got = quantize(sc, "Q4_K_M")
	want := map[string]ggml.Type{}
	for i, typ := range []ggml.Type{q4, q4, q6, q6} {
		want[fmt.Sprintf("blk.%d.ffn_down.weight", i)] = typ
		want[fmt.Sprintf("blk.%d.attn_v.weight", i)] = typ
		want[fmt.Sprintf("blk.%d.ffn_down.bias", i)] = ggml.TypeF32
	}
	check("starcoder2 Q4_K_M", got, want)
}
