package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/cli"
)

const ggufUsage = `usage:
  ggml gguf inspect [-n N] FILE        header, keys (values truncated) and tensors
  ggml gguf dump --json [--sha256] FILE  everything as JSON (64-bit integers as strings)`

// ggufCmd runs the gguf subcommands.
func ggufCmd(args []string) error {
	if len(args) < 1 {
		return cli.Usagef("gguf: a subcommand is expected\n%s", ggufUsage)
	}
	switch args[0] {
	case "inspect":
		return ggufInspect(args[1:], os.Stdout)
	case "dump":
		return ggufDump(args[1:], os.Stdout)
	case "-h", "-help", "--help":
		fmt.Println(ggufUsage)
		return nil
	}
	return cli.Usagef("gguf: unknown subcommand %q\n%s", args[0], ggufUsage)
}

// openFile opens path for inspect and dump; what is not a regular file
// (a directory, say) is refused by name before the GGUF reader sees it.
func openFile(path string) (f *gguf.File, incomplete, err error) {
	if err := cli.CheckFile(path); err != nil {
		return nil, nil, err
	}
	return openForInspection(path)
}

// openForInspection opens path. A file whose tensor data is missing (a
// truncated download) is still opened for its metadata: incomplete is then
// the reason, which the command reports with a non-zero exit status after
// showing what it can.
func openForInspection(path string) (f *gguf.File, incomplete, err error) {
	f, err = gguf.Open(path)
	if err == nil {
		return f, nil, nil
	}
	var fe *gguf.FormatError
	if !errors.As(err, &fe) {
		return nil, nil, err
	}
	if g, merr := gguf.OpenWithOptions(path, gguf.Options{MetadataOnly: true}); merr == nil {
		return g, err, nil
	}
	return nil, nil, err
}

// incompleteError is the command's error for a file shown without its data.
func incompleteError(err error) error {
	return fmt.Errorf("%w\n(the metadata above is complete; the tensor data is not)", err)
}

func ggufInspect(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("gguf inspect", flag.ContinueOnError)
	maxItems := fs.Int("n", 8, "array elements shown per key")
	if help, err := parseFlags(fs, args, "gguf inspect [-n N] FILE", "Prints the header, the keys (values truncated) and the tensors of a GGUF file."); help || err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("gguf inspect: one FILE expected\n%s", ggufUsage)
	}
	if *maxItems < 0 {
		return cli.Usagef("gguf inspect: -n %d: must be >= 0", *maxItems)
	}
	f, incomplete, err := openFile(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	if incomplete != nil {
		fmt.Fprintf(w, "warning: %v\nwarning: showing the metadata only\n\n", incomplete)
	}

	fmt.Fprintf(w, "file:        %s\n", fs.Arg(0))
	fmt.Fprintf(w, "size:        %d bytes\n", f.Size())
	fmt.Fprintf(w, "version:     %d\n", f.Version())
	fmt.Fprintf(w, "alignment:   %d\n", f.Alignment())
	fmt.Fprintf(w, "data offset: %d\n", f.DataOffset())

	kvs := f.KVs()
	fmt.Fprintf(w, "\n%d keys:\n", len(kvs))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, kv := range kvs {
		typ := kv.Type.String()
		if kv.Type == gguf.TypeArray {
			typ = fmt.Sprintf("arr[%s,%d]", kv.ArrayType, kv.Len)
		}
		v, err := f.Value(kv.Key)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", kv.Key, typ, showValue(v, *maxItems))
	}
	tw.Flush()

	infos := f.Tensors()
	fmt.Fprintf(w, "\n%d tensors:\n", len(infos))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  name\ttype\tshape\toffset\tbytes\t\n")
	var total int64
	perType := map[gguf.TensorType]int{}
	for _, t := range infos {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t\n", t.Name, t.Type, shapeString(t.Shape), t.Offset, t.Size)
		total += t.Size
		perType[t.Type]++
	}
	tw.Flush()
	if len(infos) > 0 {
		var parts []string
		for ty := gguf.TensorType(0); ty < 64; ty++ {
			if n := perType[ty]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s: %d", ty, n))
			}
		}
		fmt.Fprintf(w, "\ntensor data: %d bytes (%.2f MiB); %s\n", total, float64(total)/(1<<20), strings.Join(parts, ", "))
	}
	if incomplete != nil {
		return incompleteError(incomplete)
	}
	return nil
}

func shapeString(s []int64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

const maxShownString = 64

func showString(s string) string {
	if len(s) > maxShownString {
		cut := maxShownString
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return strconv.Quote(s)
}

// showValue renders a value on one line: long strings and arrays are cut.
func showValue(v any, maxItems int) string {
	switch x := v.(type) {
	case string:
		return showString(x)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []string:
		return showList(len(x), maxItems, func(i int) string { return showString(x[i]) })
	case []float32:
		return showList(len(x), maxItems, func(i int) string { return strconv.FormatFloat(float64(x[i]), 'g', -1, 32) })
	case []float64:
		return showList(len(x), maxItems, func(i int) string { return strconv.FormatFloat(x[i], 'g', -1, 64) })
	case []uint8, []int8, []uint16, []int16, []uint32, []int32, []uint64, []int64, []bool:
		rv := reflect.ValueOf(x)
		return showList(rv.Len(), maxItems, func(i int) string { return fmt.Sprint(rv.Index(i).Interface()) })
	}
	return fmt.Sprint(v)
}

func showList(n, maxItems int, item func(int) string) string {
	shown := min(n, maxItems)
	parts := make([]string, shown)
	for i := range shown {
		parts[i] = item(i)
	}
	s := "[" + strings.Join(parts, ", ")
	if n > shown {
		s += fmt.Sprintf(", ... (%d items)", n)
	}
	return s + "]"
}

// ---------------------------------------------------------------- dump

type jsonKV struct {
	Key       string `json:"key"`
	Type      string `json:"type"`
	ArrayType string `json:"array_type,omitempty"`
	Value     any    `json:"value"`
}

type jsonTensor struct {
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	TypeID uint32   `json:"type_id"`
	Ne     [4]int64 `json:"ne"`
	NDims  int      `json:"n_dims"`
	Offset int64    `json:"offset"`
	NBytes int64    `json:"nbytes"`
	SHA256 *string  `json:"sha256,omitempty"`
}

type jsonFile struct {
	Version    int          `json:"version"`
	Alignment  int          `json:"alignment"`
	DataOffset int64        `json:"data_offset"`
	KV         []jsonKV     `json:"kv"`
	Tensors    []jsonTensor `json:"tensors"`
	FileSize   int64        `json:"file_size"`
}

// jsonValue makes a value JSON-safe: 64-bit integers become decimal
// strings (JSON numbers lose precision beyond 2^53), non-finite floats
// become "NaN", "+Inf" or "-Inf".
func jsonValue(v any) any {
	fl := func(f float64, bits int) any {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return strconv.FormatFloat(f, 'g', -1, bits)
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, bits))
	}
	switch x := v.(type) {
	case uint64:
		return strconv.FormatUint(x, 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float32:
		return fl(float64(x), 32)
	case float64:
		return fl(x, 64)
	case []uint64:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = strconv.FormatUint(e, 10)
		}
		return out
	case []int64:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = strconv.FormatInt(e, 10)
		}
		return out
	case []float32:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fl(float64(e), 32)
		}
		return out
	case []float64:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fl(e, 64)
		}
		return out
	case []uint8: // not base64, as encoding/json would do
		out := make([]int, len(x))
		for i, e := range x {
			out[i] = int(e)
		}
		return out
	}
	return v
}

func ggufDump(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("gguf dump", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "write JSON (the only format)")
	withSHA := fs.Bool("sha256", false, "include the sha256 of each tensor's data")
	if help, err := parseFlags(fs, args, "gguf dump --json [--sha256] FILE", "Writes everything in a GGUF file as JSON (64-bit integers as strings)."); help || err != nil {
		return err
	}
	if !*asJSON {
		return cli.Usagef("gguf dump: --json is required (the only format)")
	}
	if fs.NArg() != 1 {
		return cli.Usagef("gguf dump: one FILE expected\n%s", ggufUsage)
	}
	f, incomplete, err := openFile(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	if incomplete != nil {
		fmt.Fprintf(os.Stderr, "warning: %v; dumping the metadata only\n", incomplete)
	}

	out := jsonFile{
		Version: f.Version(), Alignment: f.Alignment(), DataOffset: f.DataOffset(), FileSize: f.Size(),
		KV: []jsonKV{}, Tensors: []jsonTensor{},
	}
	for _, kv := range f.KVs() {
		v, err := f.Value(kv.Key)
		if err != nil {
			return err
		}
		j := jsonKV{Key: kv.Key, Type: kv.Type.String(), Value: jsonValue(v)}
		if kv.Type == gguf.TypeArray {
			j.ArrayType = kv.ArrayType.String()
		}
		out.KV = append(out.KV, j)
	}
	for _, t := range f.Tensors() {
		jt := jsonTensor{Name: t.Name, Type: t.Type.String(), TypeID: uint32(t.Type), Ne: t.Ne(),
			NDims: len(t.Shape), Offset: t.Offset, NBytes: t.Size}
		if *withSHA {
			if data, err := f.TensorData(t.Name); err == nil {
				sum := sha256.Sum256(data)
				s := hex.EncodeToString(sum[:])
				jt.SHA256 = &s
			}
		}
		out.Tensors = append(out.Tensors, jt)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return err
	}
	if incomplete != nil {
		return incompleteError(incomplete)
	}
	return nil
}
