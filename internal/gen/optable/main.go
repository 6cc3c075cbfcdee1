package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	root := flag.String("root", ".", "the module root (holds go.mod and csrc/)")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "optable:", err)
		os.Exit(1)
	}
}

// Files reads the description under root and returns the generated files.
func Files(root string) ([]File, error) {
	src, err := os.ReadFile(filepath.Join(root, header))
	if err != nil {
		return nil, err
	}
	t, err := Parse(src)
	if err != nil {
		return nil, err
	}
	return Generate(t)
}

// run writes the files that changed.
func run(root string) error {
	files, err := Files(root)
	if err != nil {
		return err
	}
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.Path))
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, f.Data) {
			continue
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
