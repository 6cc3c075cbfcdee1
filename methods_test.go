package ggml

// Every exported method of the package's main types, called on closed,
// foreign (another context's) and NoAlloc objects with generated arguments,
// must return (an error, or a result) or panic with a typed error (ErrClosed
// or *OpError, or gguf.ErrClosed) — never a signal, a fatal error or a
// runtime panic. Methods are enumerated with reflect, so new ones are covered
// without editing this file; argument values come in profiles (typical, zero,
// negative, huge) so that every method also meets bad numbers.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ggml-go/ggml/gguf"
	"github.com/stretchr/testify/require"
)

const nProfiles = 4 // typical, zero, negative, huge

// methodFixture holds the receivers of one call and the values its
// arguments are drawn from.
type methodFixture struct {
	dir        string
	recv, args *Context
	recvT      []*Tensor // receivers of *Tensor methods, per profile
	argT       []*Tensor // *Tensor arguments, per profile
	graph      *Graph    // receiver of *Graph methods
	argGraph   *Graph
	tp         *Threadpool
	file       *gguf.File
	writer     *gguf.Writer
	adamw      *AdamW
	trainer    *Trainer
	closers    []func()
}

func (fx *methodFixture) close() {
	for _, c := range slices.Backward(fx.closers) {
		c()
	}
}

// tensorsOf makes one tensor per profile in ctx: an f32 matrix, an i32
// vector, a transposed (non-contiguous) view, a q4_0 matrix.
func tensorsOf(ctx *Context) []*Tensor {
	m := ctx.NewTensor2D(TypeF32, 4, 4).SetName("m")
	i := ctx.NewTensor1D(TypeI32, 4).SetName("i")
	q := ctx.NewTensor2D(TypeQ4_0, 32, 2).SetName("q")
	if !ctx.NoAlloc() {
		m.Fill(0.5)
		i.Fill(1)
		q.Zero()
	}
	return []*Tensor{m, i, ctx.Transpose(m), q}
}

// newMethodFixture builds the objects of a scenario: "closed" (receivers and
// arguments of a closed context, closed pool, file and writer), "closed-args"
// (open receivers, arguments of a closed context), "foreign" (receivers and
// arguments of two open contexts) and "noalloc" (a NoAlloc context).
func newMethodFixture(t *testing.T, scenario, ggufPath string) *methodFixture {
	fx := &methodFixture{dir: t.TempDir()}
	mk := func(noAlloc bool) *Context {
		c, err := NewContext(ContextOptions{MemSize: 4 << 20, NoAlloc: noAlloc})
		require.NoError(t, err)
		fx.closers = append(fx.closers, func() { c.Close() })
		return c
	}
	fx.recv = mk(scenario == "noalloc")
	fx.args = fx.recv
	if scenario == "closed-args" || scenario == "foreign" {
		fx.args = mk(false)
	}
	fx.recvT = tensorsOf(fx.recv)
	fx.argT = fx.recvT
	if fx.args != fx.recv {
		fx.argT = tensorsOf(fx.args)
	}
	// in "foreign" the receivers use the other context's tensors; in
	// "closed-args" they must not (closing it would close them for use)
	mixed := fx.recvT[0]
	if scenario == "foreign" {
		mixed = fx.argT[0]
	}
	fx.graph = fx.recv.NewGraphCustom(64, true).BuildForward(fx.recv.Add(fx.recvT[0], mixed))
	fx.argGraph = fx.args.NewGraph().BuildForward(fx.args.Scale(fx.argT[0], 2))
	var err error
	fx.tp, err = NewThreadpool(DefaultThreadpoolParams(2))
	require.NoError(t, err)
	fx.closers = append(fx.closers, func() { fx.tp.Close() })
	fx.file, err = gguf.Open(ggufPath)
	require.NoError(t, err)
	fx.closers = append(fx.closers, func() { fx.file.Close() })
	fx.writer = gguf.NewWriter(io.Discard)
	require.NoError(t, fx.writer.SetString("general.name", "x"))
	require.NoError(t, fx.writer.DeclareTensor("t", gguf.TensorF32, []int64{4}))

	fx.adamw = NewAdamW(DefaultAdamWParams())
	if scenario != "noalloc" {
		w := fx.recv.SetParam(fx.recv.NewTensor1D(TypeF32, 4).Fill(1))
		loss := fx.recv.Sum(fx.recv.Sqr(fx.recv.Mul(mixed, w))).SetLoss()
		fx.trainer, err = NewTrainer(fx.recv, loss, TrainerOptions{Threads: 1, GraphSize: 256})
		require.NoError(t, err)
		fx.closers = append(fx.closers, func() { fx.trainer.Close() })
		fx.adamw = fx.trainer.Opt
	}
	switch scenario {
	case "closed":
		fx.recv.Close()
		fx.tp.Close()
		fx.file.Close()
		fx.writer.Close()
		if fx.trainer != nil {
			fx.trainer.Close()
		}
	case "closed-args":
		fx.args.Close()
	}
	return fx
}

var (
	typeTensor  = reflect.TypeFor[*Tensor]()
	typeGraph   = reflect.TypeFor[*Graph]()
	typeContext = reflect.TypeFor[*Context]()
	typePool    = reflect.TypeFor[*Threadpool]()
	typeFile    = reflect.TypeFor[*gguf.File]()
	typeWriter  = reflect.TypeFor[*gguf.Writer]()
	typeAny     = reflect.TypeFor[any]()
	typeError   = reflect.TypeFor[error]()
	errStop     = errors.New("stop (generated callback)")
)

// argValue makes an argument of type t for profile p.
func (fx *methodFixture) argValue(t reflect.Type, p int) reflect.Value {
	ints := []int64{2, 0, -1, 1 << 40}
	floats := []float64{1, 0, math.NaN(), math.Inf(1)}
	strs := []string{filepath.Join(fx.dir, "x"), "", filepath.Join(fx.dir, "a\x00b"), filepath.Join(fx.dir, strings.Repeat("n", 80))}
	lens := []int{4, 0, 1, 16}
	switch t {
	case typeTensor:
		return reflect.ValueOf(fx.argT[p])
	case typeGraph:
		return reflect.ValueOf(fx.argGraph)
	case typeContext:
		return reflect.ValueOf(fx.args)
	case typePool:
		return reflect.ValueOf(fx.tp)
	case typeFile:
		return reflect.ValueOf(fx.file)
	case typeWriter:
		return reflect.ValueOf(fx.writer)
	case reflect.TypeFor[Type]():
		return reflect.ValueOf([]Type{TypeF32, TypeI32, Type(200), TypeQ4_0}[p])
	case reflect.TypeFor[gguf.TensorType]():
		return reflect.ValueOf([]gguf.TensorType{gguf.TensorF32, gguf.TensorI32, gguf.TensorType(200), gguf.TensorQ4_0}[p])
	case reflect.TypeFor[ContextOptions]():
		return reflect.ValueOf(ContextOptions{MemSize: []int{1 << 16, 0, -1, 1 << 50}[p]})
	case reflect.TypeFor[ThreadpoolParams]():
		return reflect.ValueOf(DefaultThreadpoolParams(int(ints[p])))
	case typeAny:
		if p == 2 {
			return reflect.Zero(t) // nil
		}
		return reflect.ValueOf([]any{5, []float32{1, 2, 3, 4}, nil, "s"}[p])
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return reflect.ValueOf(ints[p]).Convert(t)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return reflect.ValueOf(uint64(ints[p])).Convert(t)
	case reflect.Float32, reflect.Float64:
		return reflect.ValueOf(floats[p]).Convert(t)
	case reflect.Bool:
		return reflect.ValueOf(p%2 == 1)
	case reflect.String:
		return reflect.ValueOf(strs[p]).Convert(t)
	case reflect.Slice:
		s := reflect.MakeSlice(t, lens[p], lens[p])
		for i := range lens[p] {
			s.Index(i).Set(fx.argValue(t.Elem(), p))
		}
		return s
	case reflect.Array:
		a := reflect.New(t).Elem()
		for i := range a.Len() {
			a.Index(i).Set(fx.argValue(t.Elem(), p))
		}
		return a
	case reflect.Func:
		return reflect.MakeFunc(t, func([]reflect.Value) []reflect.Value {
			out := make([]reflect.Value, t.NumOut())
			for i := range out {
				out[i] = reflect.Zero(t.Out(i))
				if t.Out(i) == typeError {
					out[i] = reflect.ValueOf(&errStop).Elem()
				}
			}
			return out
		})
	case reflect.UnsafePointer:
		if p == 0 {
			return reflect.ValueOf(testNegRowF32)
		}
		return reflect.ValueOf(unsafe.Pointer(nil))
	case reflect.Interface:
		for _, v := range []any{context.Background(), bytes.NewReader(make([]byte, 64)), io.Discard} {
			if reflect.TypeOf(v).Implements(t) {
				return reflect.ValueOf(v)
			}
		}
	}
	return reflect.Zero(t)
}

// receiver is the receiver of type t for profile p, or false if the
// scenario has none.
func (fx *methodFixture) receiver(t reflect.Type, p int) (reflect.Value, bool) {
	var v any
	switch t {
	case typeTensor:
		v = fx.recvT[p]
	case typeGraph:
		v = fx.graph
	case typeContext:
		v = fx.recv
	case typePool:
		v = fx.tp
	case typeFile:
		v = fx.file
	case typeWriter:
		v = fx.writer
	case reflect.TypeFor[*AdamW]():
		v = fx.adamw
	case reflect.TypeFor[*Trainer]():
		if fx.trainer == nil {
			return reflect.Value{}, false
		}
		v = fx.trainer
	}
	return reflect.ValueOf(v), true
}

// callOutcome calls m with args and classifies what happened: "panic:
// <typed error>", "error", "ok", or a failure (an untyped panic).
func callOutcome(m reflect.Value, args []reflect.Value) (outcome string, bad error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		err, ok := r.(error)
		var oe *OpError
		switch {
		case ok && (errors.Is(err, ErrClosed) || errors.Is(err, gguf.ErrClosed)):
			outcome = "panic: closed"
		case ok && errors.As(err, &oe):
			outcome = "panic: OpError"
		default:
			outcome, bad = "panic", fmt.Errorf("untyped panic %T: %v", r, r)
		}
	}()
	var out []reflect.Value
	if m.Type().IsVariadic() {
		out = m.CallSlice(args)
	} else {
		out = m.Call(args)
	}
	if n := len(out); n > 0 && out[n-1].Type() == typeError && !out[n-1].IsNil() {
		return "error", nil
	}
	return "ok", nil
}

// okWhenClosed lists the methods that may return normally on a closed object.
var okWhenClosed = map[string]bool{
	"Context.Close": true, "Context.Closed": true,
	"Tensor.Context": true, "Tensor.String": true,
	"Graph.Context":    true,
	"Threadpool.Close": true,
	"File.Close":       true, "File.Mapped": true, "File.Size": true,
	"Writer.Close": true, "Writer.Abort": true, "Writer.MetaSize": true,
	"AdamW.Iter": true, "AdamW.Parameters": true, "AdamW.Moments": true,
	"Trainer.Close": true,
}

// usesClosedArg reports whether a method takes an argument that belongs to a
// context (in the closed-args scenario, a closed one).
func usesClosedArg(mt reflect.Type) bool {
	for i := range mt.NumIn() {
		switch in := mt.In(i); {
		case in == typeTensor || in == typeGraph || in == typeContext:
			return true
		case in.Kind() == reflect.Slice && in.Elem() == typeTensor:
			return true
		}
	}
	return false
}

func TestEveryMethodOnClosedForeignNoAlloc(t *testing.T) {
	inSubprocess(t, 10*time.Minute, func(t *testing.T) {
		path := writeRobustGGUF(t)
		types := []reflect.Type{typeContext, typeTensor, typeGraph, typePool, typeFile, typeWriter,
			reflect.TypeFor[*AdamW](), reflect.TypeFor[*Trainer]()}
		calls, failures := 0, 0
		tally := map[string]int{}
		var silent []string
		for _, scenario := range []string{"closed", "closed-args", "foreign", "noalloc"} {
			for _, rt := range types {
				for i := range rt.NumMethod() {
					meth := rt.Method(i)
					name := rt.Elem().Name() + "." + meth.Name
					for p := range nProfiles {
						fx := newMethodFixture(t, scenario, path)
						recv, ok := fx.receiver(rt, p)
						if !ok {
							fx.close()
							continue
						}
						m := recv.Method(i)
						args := make([]reflect.Value, m.Type().NumIn())
						for j := range args {
							args[j] = fx.argValue(m.Type().In(j), p)
						}
						// a crash ends the process: name the call first
						fmt.Fprintf(os.Stderr, "call %s %s profile %d\n", scenario, name, p)
						outcome, bad := callOutcome(m, args)
						calls++
						tally[scenario+" "+outcome]++
						if bad != nil {
							failures++
							t.Errorf("%s: %s profile %d: %v", scenario, name, p, bad)
						}
						if scenario == "closed" && outcome == "ok" && !okWhenClosed[name] {
							silent = append(silent, fmt.Sprintf("%s (profile %d)", name, p))
						}
						if scenario == "closed-args" && outcome == "ok" && usesClosedArg(m.Type()) {
							silent = append(silent, fmt.Sprintf("%s with arguments of a closed context (profile %d)", name, p))
						}
						fx.close()
					}
				}
			}
		}
		slices.Sort(silent)
		silent = slices.Compact(silent)
		for _, s := range silent {
			t.Errorf("closed: %s returned normally: expected an error or a panic with ErrClosed", s)
		}
		t.Logf("%d calls, %d failures; outcomes: %v", calls, failures, tally)
	})
}
